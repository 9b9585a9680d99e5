// Pure parts of the API pipeline and the daemon configuration: routing specificity (api.md §1),
// client keys and token buckets (§14), Host names (§1) and flag parsing (§16.2).

import { describe, expect, it } from 'vitest';
import { keyOfIp } from '../../agent/api/client-key.js';
import { hostAllowlist, hostName } from '../../agent/api/host-check.js';
import { BucketTable } from '../../agent/api/rate-limit.js';
import type { Route } from '../../agent/api/route.js';
import { Router } from '../../agent/api/router.js';
import { ConfigError, loadConfig, parseDuration, parseHostPort } from '../../agent/config.js';

const route = (method: 'GET' | 'POST', path: string): Route => ({ method, path, description: path, handler: () => undefined });

describe('Router', () => {
  const router = new Router([
    route('GET', '/blocks/{hash}'),
    route('GET', '/blocks/recent'),
    route('POST', '/blocks/send'),
    route('GET', '/directory/{account}'),
    route('POST', '/directory/register'),
    route('GET', '/certificate/{provider}'),
    route('GET', '/certificate/hash/{hash}'),
    route('GET', '/a/{x}/c'),
    route('GET', '/a/b/{y}'),
    route('GET', '/'),
  ]);
  const match = (p: string) => {
    const m = router.match(p);
    return m ? { path: m.pattern.path, params: m.params } : null;
  };

  it('prefers a literal over a parameter at the first difference', () => {
    expect(match('/blocks/recent')).toEqual({ path: '/blocks/recent', params: {} });
    expect(match('/blocks/abc')).toEqual({ path: '/blocks/{hash}', params: { hash: 'abc' } });
    expect(match('/directory/register')?.path).toBe('/directory/register');
    expect(match('/a/b/c')).toEqual({ path: '/a/b/{y}', params: { y: 'c' } });
    expect(match('/a/z/c')).toEqual({ path: '/a/{x}/c', params: { x: 'z' } });
  });

  it('needs equal segment counts and non-empty parameters, and never cleans the path', () => {
    expect(match('/blocks/')).toBeNull();
    expect(match('/blocks/recent/')).toBeNull();
    expect(match('/blocks//recent')).toBeNull();
    expect(match('//')).toBeNull();
    expect(match('/')).toEqual({ path: '/', params: {} });
    expect(match('/certificate/hash/ab')?.path).toBe('/certificate/hash/{hash}');
    expect(match('/certificate/hash')?.path).toBe('/certificate/{provider}');
  });

  it('percent-decodes parameters only, keeping undecodable text as sent', () => {
    expect(match('/blocks/a%62c')?.params).toEqual({ hash: 'abc' });
    expect(match('/blocks/%zz')?.params).toEqual({ hash: '%zz' });
    expect(match('/bl%6fcks/recent')).toBeNull();
  });

  it('lists the methods of a pattern in route-list order and rejects duplicates', () => {
    expect([...router.match('/blocks/send')!.pattern.methods.keys()]).toEqual(['POST']);
    expect(() => new Router([route('GET', '/x'), route('GET', '/x')])).toThrow('duplicate route: GET /x');
  });
});

describe('client keys', () => {
  it('keys IPv4 by address, mapped IPv4 as IPv4 and IPv6 by its /64', () => {
    expect(keyOfIp('203.0.113.7')).toBe('203.0.113.7');
    expect(keyOfIp('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(keyOfIp('2001:db8:1:2::1')).toBe('2001:db8:1:2::/64');
    expect(keyOfIp('2001:0db8:0001:0002:ffff:0:0:9')).toBe('2001:db8:1:2::/64');
    expect(keyOfIp('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(keyOfIp('::1')).toBe('0:0:0:0::/64');
  });
});

describe('token buckets', () => {
  it('grants the burst, then answers the whole seconds until a token is back', () => {
    const t = new BucketTable({ rate: 10, burst: 50 });
    for (let i = 0; i < 50; i++) expect(t.take('k', 1000)).toBe(0);
    expect(t.take('k', 1000)).toBe(1);
    expect(t.take('other', 1000)).toBe(0);
    // 100 ms refill one token at 10/s.
    expect(t.take('k', 1100)).toBe(0);
    expect(t.take('k', 1100)).toBe(1);
    const slow = new BucketTable({ rate: 0.25, burst: 1 });
    expect(slow.take('k', 0)).toBe(0);
    expect(slow.take('k', 0)).toBe(4);
  });

  it('forgets idle keys and evicts the least recently used when full', () => {
    const t = new BucketTable({ rate: 1, burst: 1 }, 2);
    t.take('a', 0);
    t.take('b', 0);
    t.take('a', 10);
    t.take('c', 20);
    expect(t.size).toBe(2);
    // 'b' was evicted: it starts full again.
    expect(t.take('b', 30)).toBe(0);
    t.sweep(10 * 60_000);
    expect(t.size).toBe(0);
  });
});

describe('Host allowlist', () => {
  it('allows loopback names, the bind address and extra names, ignoring port and case', () => {
    const allowed = hostAllowlist('10.0.0.5', ['node.example.org']);
    for (const h of ['localhost', 'LOCALHOST:1', '127.0.0.1:8080', '[::1]:80', '::1', '10.0.0.5', 'node.example.org:443']) {
      expect(allowed(h), h).toBe(true);
    }
    for (const h of [undefined, '', 'evil.example', '10.0.0.6', 'localhost.evil.example']) expect(allowed(h), String(h)).toBe(false);
    expect(hostAllowlist('0.0.0.0', [])('0.0.0.0')).toBe(false);
    expect(hostAllowlist('127.0.0.1', '*')('anything')).toBe(true);
    expect(hostName('[2001:db8::1]:8080')).toBe('2001:db8::1');
  });
});

describe('configuration', () => {
  it('applies the devnet defaults under --dev', () => {
    const c = loadConfig(['--dev'], {});
    expect(c.powDifficulty).toBe(2n);
    expect(c.chatPowDifficulty).toBe(2n);
    expect(c.stabilityWindowNs).toBe(0n);
    expect(c.api).toEqual({ enabled: true, bind: '127.0.0.1', port: 8080, allowedHosts: [], corsOrigin: 'http://localhost:3000', rateLimit: false });
    expect(c.ready.minPeers).toBe(0);
    expect(c.metricsAddr).toEqual({ host: '127.0.0.1', port: 9095 });
    expect(c.adminToken).toBeNull();
    expect(loadConfig(['--dev', '--rate-limit=true'], {}).api.rateLimit).toBe(true);
  });

  it('applies the normal defaults with --genesis and reads the admin token', () => {
    const c = loadConfig(['--genesis', '/etc/net', '--no-api', '--metrics-addr=', '--api-allowed-hosts', ' A.example , b.example'], { NET_API_ADMIN_TOKEN: 't' });
    expect(c.genesisDir).toBe('/etc/net');
    expect(c.powDifficulty).toBe(0xfffff80000000000n);
    expect(c.chatPowDifficulty).toBe(0xffffc00000000000n);
    expect(c.stabilityWindowNs).toBe(3_000_000_000n);
    expect(c.api.enabled).toBe(false);
    expect(c.api.rateLimit).toBe(true);
    expect(c.api.allowedHosts).toEqual(['a.example', 'b.example']);
    expect(c.metricsAddr).toBeNull();
    expect(c.ready.minPeers).toBe(1);
    expect(c.adminToken).toBe('t');
  });

  it('parses typed flags', () => {
    const c = loadConfig(
      ['--dev', '--pow-difficulty', '0xfffff80000000000', '--min-lease-duration', '90s', '--max-lease-duration=1h', '--max-lease-cost', '18446744073709551615', '--memory', '4096', '--provider', '--ssh-port', '2222'],
      {},
    );
    expect(c.powDifficulty).toBe(0xfffff80000000000n);
    expect(c.provider.policy.minLeaseDurationSecs).toBe(90n);
    expect(c.provider.policy.maxLeaseDurationSecs).toBe(3600n);
    expect(c.provider.policy.maxLeaseCost).toBe(18_446_744_073_709_551_615n);
    expect(c.provider).toMatchObject({ enabled: true, memoryMb: 4096, sshPort: 2222 });
    expect(parseDuration('1h30m0.5s', 'x')).toBe(5_400_500_000_000n);
    expect(parseDuration('250ms', 'x')).toBe(250_000_000n);
    expect(parseHostPort('[::1]:9095', 'x')).toEqual({ host: '::1', port: 9095 });
    expect(parseHostPort(':9095', 'x')).toEqual({ host: '0.0.0.0', port: 9095 });
  });

  it('refuses bad flags with messages that name the flag', () => {
    const bad: [string[], string][] = [
      [['--dev', '--genesis', 'x'], '--dev cannot be combined with --genesis'],
      [[], 'no genesis: start with --dev (development network) or --genesis <dir>'],
      [['--dev', '--nope'], 'unknown flag: --nope'],
      [['--dev', '--api-port'], 'flag --api-port needs a value'],
      [['--dev', '--api-port', '70000'], 'invalid value for --api-port: "70000" (expected an integer 0…65535)'],
      [['--dev', '--dev=maybe'], 'invalid value for --dev: "maybe" (expected true or false)'],
      [['--dev', '--pow-difficulty', 'xyz'], 'invalid value for --pow-difficulty: "xyz" (expected hex, e.g. fffff80000000000 or 0x2)'],
      [['--dev', '--price-multiplier', '100'], 'invalid value for --price-multiplier: "100" (expected an integer 500…10000)'],
      [['--dev', '--stability-window', '3 s'], 'invalid value for --stability-window: "3 s" (expected a duration like 90s, 1h30m or 500ms)'],
      [['--dev', '--metrics-addr', 'nohost'], 'invalid value for --metrics-addr: "nohost" (expected host:port, or "" to disable)'],
      [['--dev', '--log-level', 'loud'], 'invalid value for --log-level: "loud" (expected one of trace, debug, info, warn, error, fatal, silent)'],
      [['--dev', '--min-lease-duration', '2h', '--max-lease-duration', '1h'], '--min-lease-duration must not exceed --max-lease-duration'],
      [['--dev', 'positional'], 'unexpected argument: positional'],
    ];
    for (const [argv, message] of bad) {
      expect(() => loadConfig(argv, {}), argv.join(' ')).toThrow(new ConfigError(message));
    }
  });
});
