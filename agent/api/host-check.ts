// Host allowlist (api.md §1 step 2): defeats DNS rebinding against a local node. Used by the API
// and by the ops listener.

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '::1'];
const WILDCARDS = new Set(['0.0.0.0', '::', '']);

/** Host name of a Host header value: port removed, IPv6 brackets removed, lowercased. */
export function hostName(header: string): string {
  const h = header.trim().toLowerCase();
  if (h.startsWith('[')) {
    const end = h.indexOf(']');
    return end < 0 ? h : h.slice(1, end);
  }
  const colon = h.indexOf(':');
  // More than one colon without brackets: a bare IPv6 address, no port.
  if (colon < 0 || h.indexOf(':', colon + 1) >= 0) return h;
  return h.slice(0, colon);
}

/**
 * Returns a predicate over Host header values. `extra` = `'*'` turns the check off; the bind address
 * is allowed unless it is a wildcard.
 */
export function hostAllowlist(bind: string, extra: readonly string[] | '*'): (host: string | undefined) => boolean {
  if (extra === '*') return () => true;
  const names = new Set([...LOOPBACK_NAMES, ...extra.map((h) => hostName(h))]);
  const b = bind.toLowerCase().replace(/^\[|\]$/g, '');
  if (!WILDCARDS.has(b)) names.add(b);
  return (host) => host !== undefined && names.has(hostName(host));
}
