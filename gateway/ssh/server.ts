// The provider's SSH gateway (provider.md §6): logins as `<leaseHash>` with the lease's access key;
// `direct-tcpip` channels become raw pipes to the VM's sshd (`ssh -J`), `session` channels are
// bridged through the gateway's own root login into the VM.

import { createServer, connect, type Server as TcpServer, type Socket } from 'node:net';
import type { Logger } from 'pino';
import { Gauge, type Registry } from 'prom-client';
import ssh2, { type AuthContext, type Connection } from 'ssh2';
import { isHash } from '../../ledger/codec/hex.js';
import { verifyEd25519 } from '../../ledger/crypto/ed25519.js';
import { checkServedLease, IDLE_LIMIT_MS, type LeaseAccess } from '../lease-access.js';
import { pipeBoth } from '../pipe.js';
import { hostKeyPath, loadGatewayVmKey, loadOrCreateKey, rawKeyOfEd25519Blob } from './keys.js';
import { bridgeSession, PREFERRED_CIPHERS, VmLogin } from './vm-session.js';

export const MAX_GATEWAY_CONNECTIONS = 100;
export const MAX_GATEWAY_CONNECTIONS_PER_CLIENT = 8;
const VM_DIAL_TIMEOUT_MS = 10_000;

export interface SshGatewayOptions {
  /** Holds `ssh_host_key` and `gateway_vm_key` (both created on first start). */
  dataDir: string;
  access: LeaseAccess;
  /** The client key of a peer address (api.md §14: IPv4 itself, IPv6 by /64). */
  clientKeyOfIp: (ip: string) => string;
  logger: Logger;
  metrics?: Registry;
  maxConnections?: number;
  maxConnectionsPerClient?: number;
  idleMs?: number;
}

export class SshGateway {
  private readonly tcp: TcpServer;
  private readonly ssh: ssh2.Server;
  private readonly vmKey: string;
  private readonly perClient = new Map<string, number>();
  private readonly byLease = new Map<string, Set<Connection>>();
  private readonly sockets = new Set<Socket>();
  private readonly idleMs: number;

  constructor(private readonly opts: SshGatewayOptions) {
    this.idleMs = opts.idleMs ?? IDLE_LIMIT_MS;
    const hostKey = loadOrCreateKey(hostKeyPath(opts.dataDir), 'netnode-gateway-host');
    this.vmKey = loadGatewayVmKey(opts.dataDir);
    this.ssh = new ssh2.Server(
      { hostKeys: [hostKey], ident: 'netnode-gateway', algorithms: { cipher: [...PREFERRED_CIPHERS] } },
      (client) => this.serve(client),
    );
    this.tcp = createServer({ noDelay: true }, (socket) => this.admit(socket));
    if (opts.metrics) {
      const sockets = this.sockets;
      new Gauge({
        name: 'net_ssh_gateway_connections',
        help: 'Open SSH gateway connections',
        registers: [opts.metrics],
        collect() {
          this.set(sockets.size);
        },
      });
    }
  }

  /** `--ssh-bind:--ssh-port`; resolves with the bound port. */
  listen(port: number, host: string): Promise<number> {
    return new Promise((resolve, reject) => {
      this.tcp.once('error', reject);
      this.tcp.listen(port, host, () => {
        this.tcp.off('error', reject);
        resolve((this.tcp.address() as { port: number }).port);
      });
    });
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.tcp.close(() => resolve()));
    for (const s of this.sockets) s.destroy();
    await closed;
  }

  /** Close every connection logged in for a lease (it left `accepted`). */
  closeLease(leaseHash: string): void {
    for (const conn of this.byLease.get(leaseHash) ?? []) conn.end();
  }

  /** Connection caps of provider.md §6: extra connections are closed at once. */
  private admit(socket: Socket): void {
    const key = this.opts.clientKeyOfIp(socket.remoteAddress ?? '');
    const mine = this.perClient.get(key) ?? 0;
    const maxTotal = this.opts.maxConnections ?? MAX_GATEWAY_CONNECTIONS;
    const maxMine = this.opts.maxConnectionsPerClient ?? MAX_GATEWAY_CONNECTIONS_PER_CLIENT;
    if (this.sockets.size >= maxTotal || mine >= maxMine) {
      socket.destroy();
      return;
    }
    this.sockets.add(socket);
    this.perClient.set(key, mine + 1);
    socket.once('close', () => {
      this.sockets.delete(socket);
      const n = (this.perClient.get(key) ?? 1) - 1;
      if (n > 0) this.perClient.set(key, n);
      else this.perClient.delete(key);
    });
    socket.on('error', () => {});
    this.ssh.injectSocket(socket);
  }

  private serve(client: Connection): void {
    let leaseHash: string | null = null;
    const log = this.opts.logger;
    client.on('error', (err) => log.debug({ err: err.message }, 'ssh gateway connection error'));
    client.on('authentication', (ctx) => {
      const accepted = this.authenticate(ctx);
      if (accepted === 'reject') return ctx.reject(['publickey']);
      if (accepted === 'probe') return ctx.accept();
      leaseHash = ctx.username;
      let set = this.byLease.get(leaseHash);
      if (!set) this.byLease.set(leaseHash, (set = new Set()));
      set.add(client);
      log.info({ lease: leaseHash.slice(0, 12) }, 'ssh gateway login');
      ctx.accept();
    });
    client.on('close', () => {
      if (!leaseHash) return;
      const set = this.byLease.get(leaseHash);
      set?.delete(client);
      if (set?.size === 0) this.byLease.delete(leaseHash);
    });
    client.on('ready', () => {
      const lease = leaseHash!;
      const login = new VmLogin(() => this.opts.access.vmEndpoint(lease), this.vmKey);
      client.on('close', () => login.close());
      const served = () => typeof checkServedLease(this.opts.access, lease) !== 'string';
      client.on('session', (accept, reject) => {
        if (!served()) return reject();
        bridgeSession(accept(), login, this.idleMs);
      });
      client.on('tcpip', (accept, reject) => {
        // The requested host and port are ignored: the only destination is the VM's sshd.
        if (!served()) return reject();
        void this.dialVm(lease).then(
          (socket) => pipeBoth(accept(), socket, { idleMs: this.idleMs }),
          () => reject(),
        );
      });
      client.on('request', (_accept, reject) => reject?.());
    });
  }

  /**
   * provider.md §6: the username is a lease this node serves, the key its access key; an unsigned
   * attempt only learns that the key would do ('probe'), a verified signature logs in.
   */
  private authenticate(ctx: AuthContext): 'reject' | 'probe' | 'login' {
    if (ctx.method !== 'publickey') return 'reject';
    if (!isHash(ctx.username)) return 'reject';
    const lease = checkServedLease(this.opts.access, ctx.username);
    if (typeof lease === 'string') return 'reject';
    if (ctx.key.algo !== 'ssh-ed25519') return 'reject';
    const raw = rawKeyOfEd25519Blob(ctx.key.data);
    if (!raw || raw.toString('hex') !== lease.accessPubKey) return 'reject';
    if (!ctx.signature) return 'probe';
    if (!ctx.blob || !verifyEd25519(lease.accessPubKey, ctx.blob, ctx.signature.toString('hex'))) return 'reject';
    return 'login';
  }

  private async dialVm(leaseHash: string): Promise<Socket> {
    const ep = await this.opts.access.vmEndpoint(leaseHash);
    if (!ep) throw new Error('vm not found');
    return await new Promise<Socket>((resolve, reject) => {
      const socket = connect({ host: ep.host, port: ep.port, allowHalfOpen: true, noDelay: true });
      socket.setTimeout(VM_DIAL_TIMEOUT_MS, () => socket.destroy(new Error('timeout')));
      socket.once('error', reject);
      socket.once('connect', () => {
        socket.setTimeout(0);
        resolve(socket);
      });
    });
  }
}

/** `--ssh-port N --ssh-bind ADDR` (provider.md §6); port 0 turns the gateway off (null). */
export async function startSshGateway(opts: SshGatewayOptions & { port: number; bind: string }): Promise<SshGateway | null> {
  if (opts.port === 0) return null;
  const gateway = new SshGateway(opts);
  await gateway.listen(opts.port, opts.bind);
  return gateway;
}
