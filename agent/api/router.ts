// Path routing (api.md §1 "Routing"): a pattern matches a path with the same number of segments,
// equal literal segments and non-empty parameter segments; among matches, comparing from the left,
// a literal beats a parameter at the first difference. No redirects and no path cleaning.

import type { Route } from './route.js';

interface Segment {
  literal: string | null;
  param: string | null;
}

export interface Pattern {
  path: string;
  segments: Segment[];
  /** Routes of this pattern by method, in route-list order. */
  methods: Map<string, Route>;
}

export interface Match {
  pattern: Pattern;
  params: Record<string, string>;
}

function parsePattern(path: string): Segment[] {
  if (!path.startsWith('/')) throw new Error(`route path must start with /: ${path}`);
  return path
    .slice(1)
    .split('/')
    .map((s) => {
      const m = /^\{([a-zA-Z_][a-zA-Z0-9_]*)\}$/.exec(s);
      return m ? { literal: null, param: m[1]! } : { literal: s, param: null };
    });
}

/** Literal before parameter at the first segment where the kinds differ; literals by text. */
function compareSpecificity(a: Pattern, b: Pattern): number {
  for (let i = 0; i < a.segments.length; i++) {
    const sa = a.segments[i]!;
    const sb = b.segments[i]!;
    if (sa.literal !== null && sb.literal === null) return -1;
    if (sa.literal === null && sb.literal !== null) return 1;
    if (sa.literal !== null && sb.literal !== null && sa.literal !== sb.literal) return sa.literal < sb.literal ? -1 : 1;
  }
  return 0;
}

function decodeSegment(s: string): string {
  if (!s.includes('%')) return s;
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

export class Router {
  /** Patterns by segment count, most specific first. */
  private readonly bySegments = new Map<number, Pattern[]>();

  constructor(routes: readonly Route[]) {
    const patterns = new Map<string, Pattern>();
    for (const r of routes) {
      let p = patterns.get(r.path);
      if (!p) {
        p = { path: r.path, segments: parsePattern(r.path), methods: new Map() };
        patterns.set(r.path, p);
      }
      if (p.methods.has(r.method)) throw new Error(`duplicate route: ${r.method} ${r.path}`);
      p.methods.set(r.method, r);
    }
    for (const p of patterns.values()) {
      const list = this.bySegments.get(p.segments.length) ?? [];
      list.push(p);
      this.bySegments.set(p.segments.length, list);
    }
    for (const list of this.bySegments.values()) list.sort(compareSpecificity);
  }

  /** The most specific pattern matching `path` (the path part of the request target), or null. */
  match(path: string): Match | null {
    if (!path.startsWith('/')) return null;
    const parts = path.slice(1).split('/');
    const candidates = this.bySegments.get(parts.length);
    if (!candidates) return null;
    outer: for (const pattern of candidates) {
      const segs = pattern.segments;
      for (let i = 0; i < segs.length; i++) {
        const lit = segs[i]!.literal;
        if (lit !== null ? lit !== parts[i] : parts[i] === '') continue outer;
      }
      const params: Record<string, string> = {};
      for (let i = 0; i < segs.length; i++) {
        const name = segs[i]!.param;
        if (name !== null) params[name] = decodeSegment(parts[i]!);
      }
      return { pattern, params };
    }
    return null;
  }
}
