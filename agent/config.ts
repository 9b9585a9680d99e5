// Command-line flags and environment → one typed, validated Config (api.md §16.2, README.md
// "The development network"). Validated once, at start; every bad value is a ConfigError that names
// the flag.

import { parseDifficulty } from '../ledger/crypto/pow.js';
import { U64_MAX } from '../ledger/codec/bytes.js';

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

export interface HostPort {
  host: string;
  port: number;
}

export interface LeasePolicy {
  minLeaseDurationSecs: bigint | null;
  maxLeaseDurationSecs: bigint | null;
  /** micro-XUSD; 0 = none */
  minLeaseCost: bigint;
  /** micro-XUSD; 0 = none */
  maxLeaseCost: bigint;
  /** 0 = capacity-bound */
  maxConcurrentLeases: number;
}

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';

export interface Config {
  dev: boolean;
  dataDir: string;
  /** Directory holding ledger-genesis.json and statechain-genesis.json; null under --dev. */
  genesisDir: string | null;
  powDifficulty: bigint;
  chatPowDifficulty: bigint;
  stabilityWindowNs: bigint;
  api: {
    enabled: boolean;
    bind: string;
    port: number;
    /** Extra Host names; `'*'` turns the Host check off. */
    allowedHosts: string[] | '*';
    corsOrigin: string;
    rateLimit: boolean;
  };
  /** Ops listener (api.md §16.1); null when disabled with `--metrics-addr ""`. */
  metricsAddr: HostPort | null;
  p2p: {
    port: number;
    dial: string[];
    discoveryPeers: number;
    maxConnsPerIp: number;
    maxInboundConns: number;
    discovery: boolean;
    mdns: boolean;
  };
  provider: {
    enabled: boolean;
    vcpus: number;
    memoryMb: number;
    diskGb: number;
    priceMultiplierMilli: number;
    policy: LeasePolicy;
    /** 0 = SSH gateway off */
    sshPort: number;
    sshBind: string;
    /** null = implementation default */
    vmBackend: string | null;
    /** The provider settles its leases after expiry; `--no-auto-settle` turns it off (a test switch
     *  for staging a consumer's force-settle, DECISIONS.md). */
    autoSettle: boolean;
  };
  ready: {
    minPeers: number;
    finalityStallNs: bigint;
  };
  log: {
    level: LogLevel;
    /** null = stderr */
    file: string | null;
    json: boolean;
  };
  /** NET_API_ADMIN_TOKEN; null when unset or empty. */
  adminToken: string | null;
}

// ---------------------------------------------------------------------------------------------
// Flag table. `bool` flags take `--x`, `--x=true|false`; value flags take `--x v` or `--x=v`.

type FlagKind = 'bool' | 'value';

const FLAGS: Readonly<Record<string, FlagKind>> = {
  api: 'bool',
  'api-bind': 'value',
  'api-port': 'value',
  'api-allowed-hosts': 'value',
  'cors-origin': 'value',
  'rate-limit': 'bool',
  'metrics-addr': 'value',
  port: 'value',
  dial: 'value',
  'discovery-peers': 'value',
  data: 'value',
  dev: 'bool',
  genesis: 'value',
  'pow-difficulty': 'value',
  'chat-pow-difficulty': 'value',
  provider: 'bool',
  vcpus: 'value',
  memory: 'value',
  disk: 'value',
  'price-multiplier': 'value',
  'min-lease-duration': 'value',
  'max-lease-duration': 'value',
  'min-lease-cost': 'value',
  'max-lease-cost': 'value',
  'max-concurrent-leases': 'value',
  'ssh-port': 'value',
  'ssh-bind': 'value',
  'vm-backend': 'value',
  'auto-settle': 'bool',
  'ready-min-peers': 'value',
  'ready-finality-stall': 'value',
  'stability-window': 'value',
  'log-level': 'value',
  'log-file': 'value',
  'log-json': 'bool',
  'max-conns-per-ip': 'value',
  'max-inbound-conns': 'value',
  'no-discovery': 'bool',
  'disable-mdns': 'bool',
};

/** `--no-<flag>` spellings that set a bool flag to false. */
const NEGATIONS: Readonly<Record<string, string>> = { 'no-api': 'api', 'no-auto-settle': 'auto-settle' };

export const DEFAULT_POW_DIFFICULTY = 0xfffff80000000000n;
export const DEFAULT_CHAT_POW_DIFFICULTY = 0xffffc00000000000n;
export const DEVNET_POW_DIFFICULTY = 2n;
const NS_PER_S = 1_000_000_000n;
const LOG_LEVELS: readonly LogLevel[] = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

/** Split argv into flag values. Throws ConfigError on unknown flags or missing values. */
export function parseFlags(argv: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--') || arg === '--') throw new ConfigError(`unexpected argument: ${arg}`);
    const eq = arg.indexOf('=');
    let name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
    let value = eq < 0 ? undefined : arg.slice(eq + 1);
    const negated = NEGATIONS[name];
    if (negated !== undefined) {
      if (value !== undefined) throw new ConfigError(`--${name} takes no value`);
      name = negated;
      value = 'false';
    }
    const kind = FLAGS[name];
    if (kind === undefined) throw new ConfigError(`unknown flag: --${name}`);
    if (kind === 'bool') {
      value ??= 'true';
      if (value !== 'true' && value !== 'false') {
        throw new ConfigError(`invalid value for --${name}: ${JSON.stringify(value)} (expected true or false)`);
      }
    } else if (value === undefined) {
      const next = argv[i + 1];
      if (next === undefined) throw new ConfigError(`flag --${name} needs a value`);
      value = next;
      i++;
    }
    out.set(name, value);
  }
  return out;
}

/** Build the Config from command-line arguments (after the subcommand) and the environment. */
export function loadConfig(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Config {
  const f = new FlagReader(parseFlags(argv));
  const dev = f.bool('dev', false);
  const genesis = f.string('genesis', '');
  if (dev && genesis !== '') throw new ConfigError('--dev cannot be combined with --genesis');
  if (!dev && genesis === '') {
    throw new ConfigError('no genesis: start with --dev (development network) or --genesis <dir>');
  }

  const apiBind = f.string('api-bind', '127.0.0.1');
  const allowed = f.string('api-allowed-hosts', '');
  const allowedHosts =
    allowed.trim() === '*'
      ? ('*' as const)
      : allowed
          .split(',')
          .map((h) => h.trim().toLowerCase())
          .filter((h) => h !== '');

  const metrics = f.string('metrics-addr', '127.0.0.1:9095');
  const minDur = f.optional('min-lease-duration', (v) => parseDuration(v, 'min-lease-duration') / NS_PER_S);
  const maxDur = f.optional('max-lease-duration', (v) => parseDuration(v, 'max-lease-duration') / NS_PER_S);
  if (minDur !== null && maxDur !== null && minDur > maxDur) {
    throw new ConfigError('--min-lease-duration must not exceed --max-lease-duration');
  }
  const minCost = f.u64('min-lease-cost', 0n);
  const maxCost = f.u64('max-lease-cost', 0n);
  if (maxCost !== 0n && minCost > maxCost) throw new ConfigError('--min-lease-cost must not exceed --max-lease-cost');

  const logLevel = f.string('log-level', 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`invalid value for --log-level: ${JSON.stringify(logLevel)} (expected one of ${LOG_LEVELS.join(', ')})`);
  }
  const token = env.NET_API_ADMIN_TOKEN;

  return {
    dev,
    dataDir: f.string('data', './data'),
    genesisDir: dev ? null : genesis,
    powDifficulty: f.difficulty('pow-difficulty', dev ? DEVNET_POW_DIFFICULTY : DEFAULT_POW_DIFFICULTY),
    chatPowDifficulty: f.difficulty('chat-pow-difficulty', dev ? DEVNET_POW_DIFFICULTY : DEFAULT_CHAT_POW_DIFFICULTY),
    stabilityWindowNs: f.duration('stability-window', dev ? 0n : 3n * NS_PER_S),
    api: {
      enabled: f.bool('api', true),
      bind: apiBind,
      port: f.port('api-port', 8080),
      allowedHosts,
      corsOrigin: f.string('cors-origin', 'http://localhost:3000'),
      rateLimit: f.bool('rate-limit', !dev),
    },
    metricsAddr: metrics === '' ? null : parseHostPort(metrics, 'metrics-addr'),
    p2p: {
      port: f.port('port', 9000),
      dial: f
        .string('dial', '')
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== ''),
      discoveryPeers: f.int('discovery-peers', 24, 0, 10_000),
      maxConnsPerIp: f.int('max-conns-per-ip', 8, 1, 1_000_000),
      maxInboundConns: f.int('max-inbound-conns', 256, 1, 1_000_000),
      discovery: !dev && !f.bool('no-discovery', false),
      mdns: !dev && !f.bool('disable-mdns', false),
    },
    provider: {
      enabled: f.bool('provider', false),
      vcpus: f.int('vcpus', 2, 1, 4096),
      memoryMb: f.int('memory', 2048, 1, 67_108_864),
      diskGb: f.int('disk', 20, 1, 1_048_576),
      priceMultiplierMilli: f.int('price-multiplier', 1000, 500, 10_000),
      policy: {
        minLeaseDurationSecs: minDur,
        maxLeaseDurationSecs: maxDur,
        minLeaseCost: minCost,
        maxLeaseCost: maxCost,
        maxConcurrentLeases: f.int('max-concurrent-leases', 0, 0, 1_000_000),
      },
      sshPort: f.port('ssh-port', 0),
      sshBind: f.string('ssh-bind', '0.0.0.0'),
      vmBackend: f.string('vm-backend', '') || null,
      autoSettle: f.bool('auto-settle', true),
    },
    ready: {
      minPeers: f.int('ready-min-peers', dev ? 0 : 1, 0, 1_000_000),
      finalityStallNs: f.duration('ready-finality-stall', 90n * NS_PER_S),
    },
    log: {
      level: logLevel,
      file: f.string('log-file', '') || null,
      json: f.bool('log-json', false),
    },
    adminToken: token !== undefined && token !== '' ? token : null,
  };
}

/** Typed access to parsed flag values with per-flag error messages. */
class FlagReader {
  constructor(private readonly values: Map<string, string>) {}

  string(name: string, dflt: string): string {
    return this.values.get(name) ?? dflt;
  }

  bool(name: string, dflt: boolean): boolean {
    const v = this.values.get(name);
    return v === undefined ? dflt : v === 'true';
  }

  optional<T>(name: string, parse: (v: string) => T): T | null {
    const v = this.values.get(name);
    return v === undefined || v === '' ? null : parse(v);
  }

  int(name: string, dflt: number, min: number, max: number): number {
    const v = this.values.get(name);
    if (v === undefined) return dflt;
    const n = /^[0-9]+$/.test(v) ? Number(v) : NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      throw new ConfigError(`invalid value for --${name}: ${JSON.stringify(v)} (expected an integer ${min}…${max})`);
    }
    return n;
  }

  port(name: string, dflt: number): number {
    return this.int(name, dflt, 0, 65_535);
  }

  u64(name: string, dflt: bigint): bigint {
    const v = this.values.get(name);
    if (v === undefined) return dflt;
    if (!/^[0-9]{1,20}$/.test(v) || BigInt(v) > U64_MAX) {
      throw new ConfigError(`invalid value for --${name}: ${JSON.stringify(v)} (expected an unsigned 64-bit integer)`);
    }
    return BigInt(v);
  }

  duration(name: string, dflt: bigint): bigint {
    const v = this.values.get(name);
    return v === undefined ? dflt : parseDuration(v, name);
  }

  difficulty(name: string, dflt: bigint): bigint {
    const v = this.values.get(name);
    if (v === undefined) return dflt;
    try {
      return parseDifficulty(v);
    } catch {
      throw new ConfigError(`invalid value for --${name}: ${JSON.stringify(v)} (expected hex, e.g. fffff80000000000 or 0x2)`);
    }
  }
}

const DURATION_UNITS: Readonly<Record<string, bigint>> = {
  ns: 1n,
  us: 1_000n,
  µs: 1_000n,
  ms: 1_000_000n,
  s: NS_PER_S,
  m: 60n * NS_PER_S,
  h: 3600n * NS_PER_S,
};

/** Non-negative duration such as `90s`, `1h30m`, `250ms` or `0` → nanoseconds. */
export function parseDuration(text: string, flag: string): bigint {
  const bad = (): ConfigError =>
    new ConfigError(`invalid value for --${flag}: ${JSON.stringify(text)} (expected a duration like 90s, 1h30m or 500ms)`);
  if (text === '0') return 0n;
  const re = /([0-9]+)(?:\.([0-9]+))?(ns|us|µs|ms|s|m|h)/y;
  let total = 0n;
  let pos = 0;
  while (pos < text.length) {
    re.lastIndex = pos;
    const m = re.exec(text);
    if (!m) throw bad();
    const unit = DURATION_UNITS[m[3]!]!;
    const frac = m[2] ?? '';
    const scale = 10n ** BigInt(frac.length);
    total += BigInt(m[1]!) * unit + (frac === '' ? 0n : (BigInt(frac) * unit) / scale);
    pos = re.lastIndex;
  }
  if (pos === 0) throw bad();
  return total;
}

/** `host:port`, `[v6]:port`; an empty host means every interface. */
export function parseHostPort(text: string, flag: string): HostPort {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]*)):([0-9]{1,5})$/.exec(text);
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65_535) {
    throw new ConfigError(`invalid value for --${flag}: ${JSON.stringify(text)} (expected host:port, or "" to disable)`);
  }
  return { host: m[1] ?? (m[2] || '0.0.0.0'), port };
}
