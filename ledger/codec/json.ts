// The project's one JSON codec: lossless for 64-bit integers, and able to keep the exact
// source text of chosen values (state chain op values are hashed as written, statechain.md §2.4).
//
// Parsed representation:
//   integer literal (no fraction, no exponent) → bigint   (always, so u64/i64 never round)
//   other number                               → number
//   string / boolean / null / array / object   → the usual JS values (objects are plain)
//   a value whose path the `raw` option selects → RawJson (its exact text plus parsed value)
// Emission writes bigint as a decimal literal and RawJson verbatim; output is compact.

export type JsonValue =
  | null
  | boolean
  | number
  | bigint
  | string
  | RawJson
  | JsonValue[]
  | { [key: string]: JsonValue };

export type JsonPath = readonly (string | number)[];

/** A JSON value kept as the exact text it was written with. */
export class RawJson {
  constructor(
    readonly text: string,
    readonly value: JsonValue,
    /** Some object inside the value repeats a member name. */
    readonly hasDuplicateKey = false,
    /** Deepest array/object nesting inside the value (a scalar is 0). */
    readonly depth = 0,
  ) {}
}

export class JsonSyntaxError extends Error {
  constructor(message: string, readonly position: number) {
    super(`${message} at offset ${position}`);
    this.name = 'JsonSyntaxError';
  }
}

export interface ParseOptions {
  /** Return a RawJson for every value whose path satisfies this predicate. */
  raw?: (path: JsonPath) => boolean;
  /** Accept trailing text after the first value (api.md §1: only the first value is read). */
  allowTrailing?: boolean;
}

/** Parse JSON text losslessly. Throws JsonSyntaxError on malformed input. */
export function parseJson(text: string, options: ParseOptions = {}): JsonValue {
  const parser = new Parser(text, options.raw);
  parser.skipWs();
  const value = parser.value();
  parser.skipWs();
  if (!options.allowTrailing && parser.pos !== text.length) {
    throw new JsonSyntaxError('unexpected trailing text', parser.pos);
  }
  return value;
}

const NUMBER_RE = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;

class Parser {
  pos = 0;
  private readonly path: (string | number)[] = [];
  private dupFound = false;
  private maxDepth = 0;
  private depth = 0;

  constructor(
    private readonly text: string,
    private readonly rawSelector?: (path: JsonPath) => boolean,
  ) {}

  skipWs(): void {
    const t = this.text;
    let p = this.pos;
    for (;;) {
      const c = t.charCodeAt(p);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) p++;
      else break;
    }
    this.pos = p;
  }

  value(): JsonValue {
    if (this.rawSelector && this.path.length > 0 && this.rawSelector(this.path)) {
      const start = this.pos;
      const savedDup = this.dupFound;
      const savedMax = this.maxDepth;
      const savedDepth = this.depth;
      this.dupFound = false;
      this.maxDepth = this.depth;
      const v = this.plainValue();
      const raw = new RawJson(this.text.slice(start, this.pos), v, this.dupFound, this.maxDepth - savedDepth);
      this.dupFound = savedDup || this.dupFound;
      this.maxDepth = Math.max(savedMax, this.maxDepth);
      this.depth = savedDepth;
      return raw;
    }
    return this.plainValue();
  }

  private plainValue(): JsonValue {
    const t = this.text;
    const c = t.charCodeAt(this.pos);
    switch (c) {
      case 0x7b /* { */:
        return this.object();
      case 0x5b /* [ */:
        return this.array();
      case 0x22 /* " */:
        return this.string();
      case 0x74 /* t */:
        return this.literal('true', true);
      case 0x66 /* f */:
        return this.literal('false', false);
      case 0x6e /* n */:
        return this.literal('null', null);
      default:
        if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return this.number();
        throw new JsonSyntaxError(Number.isNaN(c) ? 'unexpected end of input' : 'unexpected character', this.pos);
    }
  }

  private literal<T extends JsonValue>(word: string, v: T): T {
    if (!this.text.startsWith(word, this.pos)) throw new JsonSyntaxError('invalid literal', this.pos);
    this.pos += word.length;
    return v;
  }

  private number(): number | bigint {
    NUMBER_RE.lastIndex = this.pos;
    const m = NUMBER_RE.exec(this.text);
    if (!m) throw new JsonSyntaxError('invalid number', this.pos);
    this.pos += m[0].length;
    if (m[1] === undefined && m[2] === undefined) return BigInt(m[0]);
    return Number(m[0]);
  }

  private string(): string {
    const t = this.text;
    let p = this.pos + 1;
    let out = '';
    let chunkStart = p;
    for (;;) {
      const c = t.charCodeAt(p);
      if (Number.isNaN(c)) throw new JsonSyntaxError('unterminated string', p);
      if (c === 0x22) break;
      if (c < 0x20) throw new JsonSyntaxError('control character in string', p);
      if (c === 0x5c /* \ */) {
        out += t.slice(chunkStart, p);
        const e = t.charCodeAt(p + 1);
        switch (e) {
          case 0x22: out += '"'; break;
          case 0x5c: out += '\\'; break;
          case 0x2f: out += '/'; break;
          case 0x62: out += '\b'; break;
          case 0x66: out += '\f'; break;
          case 0x6e: out += '\n'; break;
          case 0x72: out += '\r'; break;
          case 0x74: out += '\t'; break;
          case 0x75: {
            const hex = t.slice(p + 2, p + 6);
            if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw new JsonSyntaxError('invalid unicode escape', p);
            out += String.fromCharCode(parseInt(hex, 16));
            p += 4;
            break;
          }
          default:
            throw new JsonSyntaxError('invalid escape', p);
        }
        p += 2;
        chunkStart = p;
        continue;
      }
      p++;
    }
    out += t.slice(chunkStart, p);
    this.pos = p + 1;
    return out;
  }

  private enter(): void {
    this.depth++;
    if (this.depth > this.maxDepth) this.maxDepth = this.depth;
    if (this.depth > 512) throw new JsonSyntaxError('nesting too deep', this.pos);
  }

  private array(): JsonValue[] {
    this.enter();
    this.pos++;
    const out: JsonValue[] = [];
    this.skipWs();
    if (this.text.charCodeAt(this.pos) === 0x5d) {
      this.pos++;
      this.depth--;
      return out;
    }
    for (;;) {
      this.skipWs();
      if (this.rawSelector) this.path.push(out.length);
      out.push(this.value());
      if (this.rawSelector) this.path.pop();
      this.skipWs();
      const c = this.text.charCodeAt(this.pos++);
      if (c === 0x2c) continue;
      if (c === 0x5d) break;
      throw new JsonSyntaxError('expected , or ]', this.pos - 1);
    }
    this.depth--;
    return out;
  }

  private object(): { [key: string]: JsonValue } {
    this.enter();
    this.pos++;
    const out: { [key: string]: JsonValue } = {};
    this.skipWs();
    if (this.text.charCodeAt(this.pos) === 0x7d) {
      this.pos++;
      this.depth--;
      return out;
    }
    for (;;) {
      this.skipWs();
      if (this.text.charCodeAt(this.pos) !== 0x22) throw new JsonSyntaxError('expected member name', this.pos);
      const key = this.string();
      this.skipWs();
      if (this.text.charCodeAt(this.pos++) !== 0x3a) throw new JsonSyntaxError('expected :', this.pos - 1);
      this.skipWs();
      if (this.rawSelector) this.path.push(key);
      const v = this.value();
      if (this.rawSelector) this.path.pop();
      // Duplicates matter only inside a value kept raw (RawJson.hasDuplicateKey).
      if (this.rawSelector && Object.prototype.hasOwnProperty.call(out, key)) this.dupFound = true;
      // Plain assignment is much faster; only "__proto__" needs defineProperty to stay an ordinary
      // own property instead of replacing the prototype.
      if (key === '__proto__') {
        Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
      } else {
        out[key] = v;
      }
      this.skipWs();
      const c = this.text.charCodeAt(this.pos++);
      if (c === 0x2c) continue;
      if (c === 0x7d) break;
      throw new JsonSyntaxError('expected , or }', this.pos - 1);
    }
    this.depth--;
    return out;
  }
}

/** Compact JSON text. bigint → decimal literal; RawJson → its text; undefined members are skipped. */
export function stringifyJson(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'bigint':
      return value.toString();
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError('cannot emit a non-finite number as JSON');
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (value === null) return 'null';
      if (value instanceof RawJson) return value.text;
      if (Array.isArray(value)) {
        let s = '[';
        for (let i = 0; i < value.length; i++) {
          if (i > 0) s += ',';
          const item = value[i];
          s += item === undefined ? 'null' : stringifyJson(item);
        }
        return s + ']';
      }
      const toJSON = (value as { toJSON?: () => unknown }).toJSON;
      if (typeof toJSON === 'function') return stringifyJson(toJSON.call(value));
      let s = '{';
      let first = true;
      for (const key of Object.keys(value)) {
        const v = (value as Record<string, unknown>)[key];
        if (v === undefined) continue;
        if (!first) s += ',';
        first = false;
        s += JSON.stringify(key) + ':' + stringifyJson(v);
      }
      return s + '}';
    }
    default:
      throw new TypeError(`cannot emit ${typeof value} as JSON`);
  }
}

/** A JSON object (not array, not null, not RawJson). */
export function isJsonObject(v: unknown): v is { [key: string]: JsonValue } {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof RawJson);
}
