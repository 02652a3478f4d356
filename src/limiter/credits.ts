/**
 * Usage credits: how many verifications a key has left, reset to `amount` at 00:00 UTC every day,
 * or on `refillDay` of every month (the month's last day when it is shorter). Refills are applied
 * lazily, the next time the key is read or verified, so no background job is needed.
 */
import type { RefillConfig } from '../domain/credits';

const DAY_MS = 86_400_000;

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
}

function monthlyPoint(year: number, month: number, refillDay: number): number {
  return Date.UTC(year, month, Math.min(refillDay, daysInMonth(year, month)));
}

/** The latest refill point at or before `now` (unix ms, UTC). */
export function latestRefillPoint(
  now: number,
  refill: Pick<RefillConfig, 'interval' | 'refillDay'>,
): number {
  if (refill.interval === 'daily') return Math.floor(now / DAY_MS) * DAY_MS;
  const date = new Date(now);
  const year = date.getUTCFullYear();
  const month = date.getUTCMonth();
  const day = refill.refillDay ?? 1;
  const thisMonth = monthlyPoint(year, month, day);
  return thisMonth <= now
    ? thisMonth
    : monthlyPoint(month === 0 ? year - 1 : year, (month + 11) % 12, day);
}

/** What `remaining` is at `now`, given what is stored: a passed refill point resets it. */
export function creditsAt(
  now: number,
  stored: { remaining: number; lastRefillAt: number },
  refill: RefillConfig | undefined,
): { remaining: number; lastRefillAt: number } {
  if (!refill) return stored;
  const point = latestRefillPoint(now, refill);
  return stored.lastRefillAt < point ? { remaining: refill.amount, lastRefillAt: point } : stored;
}
