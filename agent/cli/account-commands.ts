// Commands for people holding an account: `netnode wallet create|show|balance`, `send`, `receive`,
// `mint`, `burn`, `lease open|show|cancel|force-settle`, `vms`. They talk to a node's HTTP API
// (`--node`, default http://127.0.0.1:8080), sign locally with the wallet's key, and print amounts
// in decimal units (6 places).
import { parseArgs } from 'node:util';
import { stringifyJson, type JsonValue } from '../../ledger/codec/json.js';
import { isHash, isLowerHex } from '../../ledger/codec/hex.js';
import { parseCertificateJson } from '../../ledger/certificates/codec.js';
import { publicKeyFromSeed } from '../../ledger/crypto/ed25519.js';
import { leaseCost } from '../../ledger/state/lease-math.js';
import { ApiError, NodeClient } from '../client/node-client.js';
import { AccountClient, decodeAttestation } from '../wallet/account-client.js';
import { formatAmount, parseAmount, parseDurationSeconds } from '../wallet/amounts.js';
import { buildBurn, buildForceSettle, buildLease, buildLeaseCancel, buildMint, buildReceive, buildSend, nowNs } from '../wallet/builders.js';
import { defaultWalletDir, Wallet } from '../wallet/wallet.js';

const COMMON = {
  node: { type: 'string' },
  wallet: { type: 'string' },
  'dev-key': { type: 'string' },
} as const;

interface Common {
  node?: string;
  wallet?: string;
  'dev-key'?: string;
}

const out = (line: string): void => void process.stdout.write(`${line}\n`);
const progress = (line: string): void => void process.stderr.write(`… ${line}\n`);

export function nodeClientFor(o: { node?: string }): NodeClient {
  return new NodeClient(o.node ?? process.env.NETNODE_NODE ?? 'http://127.0.0.1:8080', {
    adminToken: process.env.NET_API_ADMIN_TOKEN || undefined,
  });
}

export function walletFor(o: Common): Wallet {
  const dir = o.wallet ?? defaultWalletDir();
  if (o['dev-key'] !== undefined) {
    const n = Number(o['dev-key']);
    if (!Number.isInteger(n) || n < 1 || n > 9) throw new Error('--dev-key takes 1…9 (the public devnet keys)');
    return Wallet.dev(n, dir);
  }
  return Wallet.open(dir);
}

function account(o: Common): { w: Wallet; acct: AccountClient } {
  const w = walletFor(o);
  return { w, acct: new AccountClient(nodeClientFor(o), w.seed, w.address, w.publicKey, progress) };
}

function requireAddress(s: string | undefined, what: string): string {
  if (!isLowerHex(s, 64)) throw new Error(`${what} must be a 64-character lowercase hex address`);
  return s;
}

function requireHash(s: string | undefined, usage: string): string {
  if (!isHash(s)) throw new Error(`usage: ${usage}`);
  return s;
}

function asset(s: string | undefined): 'XE' | 'XUSD' {
  const a = (s ?? 'XE').toUpperCase();
  if (a !== 'XE' && a !== 'XUSD') throw new Error('--asset must be XE or XUSD');
  return a;
}

async function walletCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  const { values } = parseArgs({ args: rest, options: COMMON, allowPositionals: false });
  switch (sub) {
    case 'create':
    case 'show': {
      const w = sub === 'create' ? Wallet.create(values.wallet ?? defaultWalletDir()) : walletFor(values);
      out(`wallet: ${w.dir}`);
      out(`address: ${w.address}`);
      out(`public_key: ${w.publicKey}`);
      return 0;
    }
    case 'balance': {
      const { w, acct } = account(values);
      const st = await acct.state();
      out(`address: ${w.address}`);
      for (const a of ['XE', 'XUSD']) out(`${a}: ${formatAmount(st.balances[a] ?? 0n)}`);
      return 0;
    }
    default:
      throw new Error('usage: netnode wallet create|show|balance [--wallet DIR] [--node URL]');
  }
}

async function sendCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { ...COMMON, asset: { type: 'string' }, memo: { type: 'string' } },
    allowPositionals: true,
  });
  if (positionals.length !== 2) throw new Error('usage: netnode send <to address> <amount> [--asset XE|XUSD] [--memo TEXT]');
  const to = requireAddress(positionals[0], 'recipient');
  const amount = parseAmount(positionals[1]!);
  const a = asset(values.asset);
  const { acct } = account(values);
  const b = await acct.submit((st) => buildSend(st, { to, amount, asset: a, memo: values.memo }, nowNs()));
  out(`sent ${formatAmount(amount)} ${a} to ${to}`);
  out(`hash: ${b.hash}`);
  return 0;
}

async function receiveCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: COMMON, allowPositionals: true });
  const { acct } = account(values);
  let entries = await acct.pending();
  if (positionals.length > 0) {
    const wanted = new Set(positionals);
    entries = entries.filter((e) => wanted.has(e.send_hash));
    if (entries.length !== wanted.size) throw new Error('some of the given sends are not pending for this account');
  }
  let received = 0;
  for (const entry of entries) {
    try {
      const b = await acct.submit((st) => buildReceive(st, entry, nowNs()));
      out(`received ${formatAmount(entry.amount)} ${entry.asset} (${entry.send_hash}) → ${b.hash}`);
      received++;
    } catch (err) {
      // A live lease escrow shows up as pending for a provider but can never be received.
      if (err instanceof ApiError && err.message.includes('cannot receive a live lease escrow')) continue;
      throw err;
    }
  }
  if (received === 0) out('nothing to receive');
  return 0;
}

async function mintCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: COMMON, allowPositionals: true });
  if (positionals.length !== 1) throw new Error('usage: netnode mint <amount>   (XUSD, authorized minters only)');
  const amount = parseAmount(positionals[0]!);
  const { acct } = account(values);
  const b = await acct.submit((st) => buildMint(st, amount, nowNs()));
  out(`minted ${formatAmount(amount)} XUSD`);
  out(`hash: ${b.hash}`);
  return 0;
}

async function burnCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: { ...COMMON, memo: { type: 'string' } }, allowPositionals: true });
  if (positionals.length !== 1) throw new Error('usage: netnode burn <amount> [--memo TEXT]   (XE only)');
  const amount = parseAmount(positionals[0]!);
  const { acct } = account(values);
  const b = await acct.submit((st) => buildBurn(st, amount, nowNs(), values.memo));
  out(`burned ${formatAmount(amount)} XE`);
  out(`hash: ${b.hash}`);
  return 0;
}

async function waitForAccept(acct: AccountClient, hash: string, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    const lease = await acct.lease(hash);
    if (lease.state !== last) progress(`lease ${hash.slice(0, 12)}: ${lease.state}`);
    last = lease.state;
    if (lease.state !== 'created' || Date.now() > deadline) return lease.state;
    await new Promise((r) => setTimeout(r, 1000));
  }
}

async function leaseCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    options: {
      ...COMMON,
      provider: { type: 'string' },
      vcpus: { type: 'string' },
      memory: { type: 'string' },
      disk: { type: 'string' },
      duration: { type: 'string' },
      wait: { type: 'boolean' },
    },
    allowPositionals: true,
  });
  const { w, acct } = account(values);
  switch (sub) {
    case 'open': {
      const info = await acct.nodeInfo();
      const provider = values.provider ? requireAddress(values.provider, '--provider') : info.address;
      const dims = {
        vcpus: BigInt(values.vcpus ?? '1'),
        memory_mb: BigInt(values.memory ?? '512'),
        disk_gb: BigInt(values.disk ?? '5'),
        duration: parseDurationSeconds(values.duration ?? '300'),
      };
      const cert = parseCertificateJson(await acct.node.get(`/certificate/${provider}`));
      const cost = leaseCost(dims, cert.price_multiplier_milli);
      const accessSeed = w.newAccessSeed();
      progress(`leasing from ${provider.slice(0, 12)}: cost ${formatAmount(cost)} XUSD at multiplier ${cert.price_multiplier_milli}`);
      const order = { provider, ...dims, accessPubKey: publicKeyFromSeed(accessSeed), certificateHash: cert.hash, cost };
      const b = await acct.submit((st) => buildLease(st, order, nowNs()));
      const keyFile = w.saveAccessSeed(b.hash, accessSeed);
      out(`lease: ${b.hash}`);
      out(`cost: ${formatAmount(cost)} XUSD`);
      out(`access_key: ${keyFile}`);
      if (values.wait) out(`state: ${await waitForAccept(acct, b.hash, 60_000)}`);
      return 0;
    }
    case 'show': {
      const hash = requireHash(positionals[0], 'netnode lease show <lease hash>');
      for (const [k, v] of Object.entries((await acct.node.get(`/leases/${hash}`)) as Record<string, JsonValue>)) {
        out(`${k}: ${typeof v === 'object' && v !== null ? stringifyJson(v) : String(v)}`);
      }
      return 0;
    }
    case 'cancel': {
      const hash = requireHash(positionals[0], 'netnode lease cancel <lease hash>');
      const lease = await acct.lease(hash);
      const b = await acct.submit((st) => buildLeaseCancel(st, lease, nowNs()));
      out(`cancelled: ${hash} (refund ${formatAmount(lease.cost)} XUSD)`);
      out(`hash: ${b.hash}`);
      return 0;
    }
    case 'force-settle': {
      const hash = requireHash(positionals[0], 'netnode lease force-settle <lease hash>');
      const lease = await acct.lease(hash);
      const b = await acct.submit(async (st) => {
        const att = decodeAttestation(await acct.node.post('/attestation/request', { lease_hash: hash }));
        return buildForceSettle(st, lease, [att], nowNs());
      });
      out(`force-settled: ${hash}`);
      out(`hash: ${b.hash}`);
      return 0;
    }
    default:
      throw new Error('usage: netnode lease open|show|cancel|force-settle …');
  }
}

async function vmsCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: COMMON, allowPositionals: false });
  const vms = (await nodeClientFor(values).get('/vms')) as JsonValue[];
  if (vms.length === 0) out('no VMs');
  for (const vm of vms) out(stringifyJson(vm));
  return 0;
}

export const accountCommands: Record<string, (argv: string[]) => Promise<number>> = {
  wallet: walletCommand,
  send: sendCommand,
  receive: receiveCommand,
  mint: mintCommand,
  burn: burnCommand,
  lease: leaseCommand,
  vms: vmsCommand,
};
