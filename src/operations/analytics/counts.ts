import {
  BUCKET_MS,
  bucketStart,
  type Granularity,
  type ReadRange,
  type UsageCounts,
} from '../../domain/usage';
import { BadRequestError } from '../../errors';

/** The most buckets one call reads: the default retention of minutes (48 h) or hours (90 days). */
export const MAX_BUCKETS = 3000;

/** A range given in the input: a 400 when it ends before it starts (judged before permissions). */
export function checkRange(input: { start?: number; end?: number }): void {
  if (input.start !== undefined && input.end !== undefined && input.start >= input.end) {
    throw new BadRequestError('start cannot be equal or greater than end');
  }
}

/**
 * The slots of a time series from `start` to `end`: the start of each bucket of the range that is
 * within retention (older ones hold nothing), refused with a 400 beyond MAX_BUCKETS. A reader that
 * answers every slot, zeros included, answers no more rows than this.
 */
export function timeSlots(
  store: Pick<UsageCounts, 'retention'>,
  granularity: Granularity,
  range: ReadRange,
  advice: string,
): number[] {
  const size = BUCKET_MS[granularity];
  const from = Math.max(range.start, range.now - store.retention[granularity]);
  if ((range.end - from) / size > MAX_BUCKETS) {
    const why = `at most ${MAX_BUCKETS} ${granularity}s at a time; ${advice}`;
    throw new BadRequestError(
      [
        { path: ['start'], message: why },
        { path: ['end'], message: why },
      ],
      { message: `start, end: ${why}` },
    );
  }
  const slots: number[] = [];
  for (let t = bucketStart(granularity, from); t <= range.end; t += size) slots.push(t);
  return slots;
}
