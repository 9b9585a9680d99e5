import { describe, expect, it } from 'vitest';
import {
  JsonSyntaxError,
  RawJson,
  isJsonObject,
  parseJson,
  stringifyJson,
  type JsonValue,
} from '../../ledger/codec/json.js';

describe('lossless integers', () => {
  it.each(['18446744073709551615', '-9223372036854775808', '9007199254740993', '0', '-1'])('%s round-trips', (text) => {
    const v = parseJson(text);
    expect(typeof v).toBe('bigint');
    expect(v).toBe(BigInt(text));
    expect(stringifyJson(v)).toBe(text);
  });

  it('integers inside structures stay exact', () => {
    const text = '{"balance":18446744073709551615,"ts":[-9223372036854775808,9007199254740993]}';
    const v = parseJson(text) as { balance: bigint; ts: bigint[] };
    expect(v.balance).toBe(18446744073709551615n);
    expect(v.ts[1]).toBe(9007199254740993n);
    expect(stringifyJson(v)).toBe(text);
  });

  it('fractions and exponents are numbers, not bigints', () => {
    expect(parseJson('1.5')).toBe(1.5);
    expect(parseJson('1e3')).toBe(1000);
    expect(typeof parseJson('1.0')).toBe('number');
    expect(typeof parseJson('-0')).toBe('bigint');
  });

  it('emits the shortest round-trip form of doubles', () => {
    expect(stringifyJson(0.4)).toBe('0.4');
    expect(stringifyJson(0.1 + 0.2)).toBe('0.30000000000000004');
    expect(parseJson(stringifyJson(0.1 + 0.2))).toBe(0.1 + 0.2);
    expect(() => stringifyJson(Number.NaN)).toThrow(TypeError);
  });
});

describe('RawJson', () => {
  const raw = (path: readonly (string | number)[]) => path.length === 3 && path[0] === 'ops' && path[2] === 'value';

  it('keeps the exact source text, whitespace included, and emits it verbatim', () => {
    const text = '{"ops":[{"key":"k","value": { "b" : [1, 2 ],\n "a":18446744073709551615 } }]}';
    const v = parseJson(text, { raw }) as { ops: { value: RawJson }[] };
    const r = v.ops[0]!.value;
    expect(r).toBeInstanceOf(RawJson);
    expect(r.text).toBe('{ "b" : [1, 2 ],\n "a":18446744073709551615 }');
    expect((r.value as { a: bigint }).a).toBe(18446744073709551615n);
    expect(r.hasDuplicateKey).toBe(false);
    expect(r.depth).toBe(2);
    expect(stringifyJson(v)).toBe('{"ops":[{"key":"k","value":{ "b" : [1, 2 ],\n "a":18446744073709551615 }}]}');
  });

  it('a scalar raw value has depth 0', () => {
    const v = parseJson('{"ops":[{"value":"devnet"}]}', { raw }) as { ops: { value: RawJson }[] };
    expect(v.ops[0]!.value.text).toBe('"devnet"');
    expect(v.ops[0]!.value.depth).toBe(0);
  });

  it('detects duplicate member names inside the raw value, at any depth', () => {
    const dup = parseJson('{"ops":[{"value":{"a":1,"b":{"c":1,"c":2}}}]}', { raw }) as { ops: { value: RawJson }[] };
    expect(dup.ops[0]!.value.hasDuplicateKey).toBe(true);
    const clean = parseJson('{"ops":[{"value":{"a":1,"b":{"a":1}}}],"x":1}', { raw }) as { ops: { value: RawJson }[] };
    expect(clean.ops[0]!.value.hasDuplicateKey).toBe(false);
  });

  it('measures nesting depth of the raw value', () => {
    const v = parseJson('{"ops":[{"value":[[[{}]]]}]}', { raw }) as { ops: { value: RawJson }[] };
    expect(v.ops[0]!.value.depth).toBe(4);
  });
});

describe('syntax', () => {
  it('rejects trailing text unless allowed', () => {
    expect(() => parseJson('{"a":1} x')).toThrow(JsonSyntaxError);
    expect(() => parseJson('1 2')).toThrow(/trailing/);
    expect(parseJson('{"a":1} x', { allowTrailing: true })).toEqual({ a: 1n });
    expect(parseJson('  {"a":1}\n\t ')).toEqual({ a: 1n });
  });

  it.each([
    [''],
    ['{'],
    ['{"a"}'],
    ['{"a":}'],
    ['{a:1}'],
    ['[1,]'],
    ['[1 2]'],
    ['"unterminated'],
    ['"bad \\x escape"'],
    ['"\\u12g4"'],
    ['"raw \u0001 control"'],
    ['01'],
    ['+1'],
    ['.5'],
    ['1.'],
    ['tru'],
    ['nul'],
    ["'single'"],
    ['{"a":1,}'],
  ])('%j is malformed', (text) => {
    expect(() => parseJson(text)).toThrow(JsonSyntaxError);
  });

  it('reports an offset', () => {
    try {
      parseJson('[1, x]');
      throw new Error('no error');
    } catch (e) {
      expect(e).toBeInstanceOf(JsonSyntaxError);
      expect((e as JsonSyntaxError).position).toBe(4);
    }
  });

  it('rejects nesting deeper than 512', () => {
    expect(() => parseJson('['.repeat(513) + ']'.repeat(513))).toThrow(/too deep/);
    expect(() => parseJson('['.repeat(512) + ']'.repeat(512))).not.toThrow();
  });

  it('decodes escapes including surrogate pairs', () => {
    expect(parseJson('"a\\n\\t\\"\\\\\\/\\u00e9\\ud83d\\ude00"')).toBe('a\n\t"\\/é😀');
    expect(stringifyJson('é😀\n')).toBe('"é😀\\n"');
  });
});

describe('"__proto__" safety', () => {
  it('a member named "__proto__" is an own property and never changes the prototype', () => {
    const v = parseJson('{"__proto__":{"polluted":true},"a":1}') as Record<string, JsonValue>;
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect(Object.prototype.hasOwnProperty.call(v, '__proto__')).toBe(true);
    expect((v as { polluted?: unknown }).polluted).toBeUndefined();
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    expect(Object.keys(v)).toEqual(['__proto__', 'a']);
    expect(stringifyJson(v)).toBe('{"__proto__":{"polluted":true},"a":1}');
    expect(isJsonObject(v)).toBe(true);
  });

  it('duplicate "__proto__" members keep the last value', () => {
    const v = parseJson('{"__proto__":1,"__proto__":2}') as Record<string, JsonValue>;
    expect(Object.getOwnPropertyDescriptor(v, '__proto__')?.value).toBe(2n);
  });
});

describe('stringifyJson', () => {
  it('is compact, skips undefined members, writes empty containers', () => {
    expect(stringifyJson({ a: [], b: {}, c: undefined, d: null, e: true, f: 'x' })).toBe(
      '{"a":[],"b":{},"d":null,"e":true,"f":"x"}',
    );
  });

  it('isJsonObject excludes arrays, null and RawJson', () => {
    expect(isJsonObject([])).toBe(false);
    expect(isJsonObject(null)).toBe(false);
    expect(isJsonObject(new RawJson('{}', {}))).toBe(false);
    expect(isJsonObject({})).toBe(true);
  });
});
