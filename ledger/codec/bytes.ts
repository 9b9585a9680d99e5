// Big-endian byte writer for hash and signature pre-images (README.md "Notation").

/** The ranges of the protocol's 64-bit integers (u64 nonces, indexes and amounts; i64 timestamps). */
export const U64_MAX = (1n << 64n) - 1n;
export const I64_MIN = -(1n << 63n);
export const I64_MAX = (1n << 63n) - 1n;

export class ByteWriter {
  private buf: Buffer;
  private len = 0;

  constructor(initialCapacity = 256) {
    this.buf = Buffer.allocUnsafe(initialCapacity);
  }

  /** Grows the buffer (which may replace `this.buf`) and returns the write offset. */
  private reserve(n: number): number {
    const at = this.len;
    if (at + n > this.buf.length) {
      const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, at + n));
      this.buf.copy(next, 0, 0, at);
      this.buf = next;
    }
    this.len = at + n;
    return at;
  }

  u8(x: number): this {
    const at = this.reserve(1);
    this.buf[at] = x & 0xff;
    return this;
  }

  u16be(x: number): this {
    const at = this.reserve(2);
    this.buf.writeUInt16BE(x, at);
    return this;
  }

  u32be(x: number): this {
    const at = this.reserve(4);
    this.buf.writeUInt32BE(x, at);
    return this;
  }

  /** Unsigned 64-bit; throws RangeError outside 0 … 2^64−1. */
  u64be(x: bigint): this {
    if (x < 0n || x > U64_MAX) throw new RangeError(`u64 out of range: ${x}`);
    const at = this.reserve(8);
    this.buf.writeBigUInt64BE(x, at);
    return this;
  }

  /** Signed 64-bit as its two's-complement bit pattern, big-endian. */
  i64be(x: bigint): this {
    if (x < I64_MIN || x > I64_MAX) throw new RangeError(`i64 out of range: ${x}`);
    const at = this.reserve(8);
    this.buf.writeBigInt64BE(x, at);
    return this;
  }

  u64le(x: bigint): this {
    if (x < 0n || x > U64_MAX) throw new RangeError(`u64 out of range: ${x}`);
    const at = this.reserve(8);
    this.buf.writeBigUInt64LE(x, at);
    return this;
  }

  bytes(b: Uint8Array): this {
    const at = this.reserve(b.length);
    this.buf.set(b, at);
    return this;
  }

  /** UTF-8 bytes of a string, no length prefix. */
  utf8(s: string): this {
    const n = Buffer.byteLength(s, 'utf8');
    const at = this.reserve(n);
    this.buf.write(s, at, n, 'utf8');
    return this;
  }

  /** `u64be(byte length) ‖ UTF-8 bytes`. */
  lp8(s: string | Uint8Array): this {
    const b = typeof s === 'string' ? Buffer.from(s, 'utf8') : s;
    this.u64be(BigInt(b.length));
    return this.bytes(b);
  }

  /** `u32be(byte length) ‖ UTF-8 bytes`. */
  lp4(s: string | Uint8Array): this {
    const b = typeof s === 'string' ? Buffer.from(s, 'utf8') : s;
    this.u32be(b.length);
    return this.bytes(b);
  }

  /** The bytes a lowercase hex string decodes to (caller checks the shape). */
  rawHex(hex: string): this {
    const n = hex.length >>> 1;
    const at = this.reserve(n);
    this.buf.write(hex, at, n, 'hex');
    return this;
  }

  zeros(n: number): this {
    const at = this.reserve(n);
    this.buf.fill(0, at, this.len);
    return this;
  }

  get length(): number {
    return this.len;
  }

  finish(): Uint8Array {
    return new Uint8Array(this.buf.buffer, this.buf.byteOffset, this.len);
  }
}
