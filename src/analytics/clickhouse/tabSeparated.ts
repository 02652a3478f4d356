/**
 * Rows in ClickHouse's TabSeparated format, written byte by byte into one Buffer: what the sink
 * sends a batch as. Per row this is a loop over the characters of a few short strings, without
 * the per-row JSON text, the batch-long string built from it, and its copy into a Buffer that
 * JSONEachRow took (docs/performance.md, "The ClickHouse sink"); ClickHouse parses it with less
 * work too (no column names per row).
 *
 * Strings are escaped as ClickHouse writes them itself: backslash, tab, line feed, carriage
 * return, NUL, backspace, form feed and the single quote, each as a backslash sequence that its
 * TabSeparated and quoted-string readers both decode. One escape serves a column and an element
 * of an Array(String) (`['a','b']`, elements quoted), whose quote must be escaped.
 */
export class TabSeparatedWriter {
  private buffer: Buffer;
  private length = 0;

  /** `bytesHint`: the size expected; the buffer grows past it when needed. */
  constructor(bytesHint: number) {
    this.buffer = Buffer.allocUnsafe(Math.max(256, bytesHint));
  }

  /** A String column's value, escaped. */
  string(value: string): this {
    const size = value.length;
    // At most two bytes per character on the ASCII path below.
    this.reserve(2 * size);
    const buffer = this.buffer;
    let at = this.length;
    for (let i = 0; i < size; i++) {
      const code = value.charCodeAt(i);
      if (code >= 0x80) {
        this.length = at;
        this.nonAscii(value.slice(i));
        return this;
      }
      const escape = ESCAPES[code];
      if (escape === 0) {
        buffer[at++] = code;
      } else {
        buffer[at++] = BACKSLASH;
        buffer[at++] = escape as number;
      }
    }
    this.length = at;
    return this;
  }

  /** An Int64 or UInt8 column's value (an integer: JSONEachRow wrote the same digits). */
  integer(value: number): this {
    return this.ascii(String(value));
  }

  /** An Array(String) column's value: `['a','b']`. */
  strings(values: readonly string[]): this {
    this.byte(OPEN);
    for (let i = 0; i < values.length; i++) {
      if (i > 0) this.byte(COMMA);
      this.byte(QUOTE);
      this.string(values[i] as string);
      this.byte(QUOTE);
    }
    return this.byte(CLOSE);
  }

  /** Between two columns. */
  tab(): this {
    return this.byte(TAB);
  }

  /** After a row's last column. */
  endRow(): this {
    return this.byte(LINE_FEED);
  }

  /** Bytes another writer wrote (a batch's constant columns, written once for all its rows). */
  bytes(value: Buffer): this {
    this.reserve(value.length);
    value.copy(this.buffer, this.length);
    this.length += value.length;
    return this;
  }

  /** What was written; the writer is not used after. */
  finish(): Buffer {
    return this.buffer.subarray(0, this.length);
  }

  private byte(code: number): this {
    this.reserve(1);
    this.buffer[this.length++] = code;
    return this;
  }

  /** Text known to need no escape (digits). */
  private ascii(text: string): this {
    this.reserve(text.length);
    this.length += this.buffer.write(text, this.length, 'latin1');
    return this;
  }

  /** The rest of a string from its first non-ASCII character: escaped, then as UTF-8. */
  private nonAscii(rest: string): void {
    const escapedRest = rest.replace(
      SPECIAL,
      (c) => `\\${String.fromCharCode(ESCAPES[c.charCodeAt(0)] as number)}`,
    );
    this.reserve(3 * escapedRest.length);
    this.length += this.buffer.write(escapedRest, this.length, 'utf8');
  }

  private reserve(bytes: number): void {
    if (this.length + bytes <= this.buffer.length) return;
    let size = this.buffer.length * 2;
    while (size < this.length + bytes) size *= 2;
    const grown = Buffer.allocUnsafe(size);
    this.buffer.copy(grown, 0, 0, this.length);
    this.buffer = grown;
  }
}

const BACKSLASH = 0x5c;
const TAB = 0x09;
const LINE_FEED = 0x0a;
const OPEN = 0x5b;
const CLOSE = 0x5d;
const COMMA = 0x2c;
const QUOTE = 0x27;

/** For each ASCII code, the letter after the backslash that escapes it, or 0: none needed. */
const ESCAPES = new Uint8Array(128);
ESCAPES[0x00] = 0x30; // \0
ESCAPES[0x08] = 0x62; // \b
ESCAPES[0x09] = 0x74; // \t
ESCAPES[0x0a] = 0x6e; // \n
ESCAPES[0x0c] = 0x66; // \f
ESCAPES[0x0d] = 0x72; // \r
ESCAPES[0x27] = 0x27; // \'
ESCAPES[0x5c] = 0x5c; // \\

const SPECIAL = /[\0\b\t\n\f\r'\\]/g;
