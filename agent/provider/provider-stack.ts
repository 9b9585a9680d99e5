// Everything that turns leases into reachable VMs, built from the Config: the VM backend, its
// records and reconciler, the provider loop (accept, settle; and on every node the consumer's
// force-settle), the SSH gateway and the HTTP tunnel. The composition root (agent/node.ts) calls
// `startLeaseServices` once and hands the returned VM handlers to the API.
import { existsSync, accessSync, constants as fsConstants } from 'node:fs';
import type { Database } from 'better-sqlite3';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import Docker from 'dockerode';
import type { Ledger } from '../../ledger/ledger.js';
import type { Lease } from '../../ledger/types.js';
import type { VmBackend } from '../../provisioning/backend.js';
import { DockerBackend } from '../../provisioning/docker/backend.js';
import { dockerImageRef, dockerImageSettings } from '../../provisioning/images/docker-image.js';
import { DEFAULT_LIBVIRT_IMAGE_DIR, libvirtImage } from '../../provisioning/images/libvirt-image.js';
import { LibvirtBackend } from '../../provisioning/libvirt/backend.js';
import type { LeaseFacts, LeaseView } from '../../provisioning/lease-view.js';
import { Reconciler } from '../../provisioning/reconciler.js';
import { VmRecords } from '../../provisioning/records.js';
import type { LeaseAccess, RemoteTunnelDialer } from '../../gateway/lease-access.js';
import { gatewayVmPublicKeyLine } from '../../gateway/ssh/keys.js';
import { startSshGateway, type SshGateway } from '../../gateway/ssh/server.js';
import { TunnelRegistry } from '../../gateway/tunnel/registry.js';
import { tunnelRoute } from '../../gateway/tunnel/tunnel.js';
import { clientKey, keyOfIp } from '../api/client-key.js';
import { nowNs } from '../api/http.js';
import type { VmHandlers } from '../api/vms.js';
import { providerVmHandlers } from '../api/vm-records.js';
import type { Config } from '../config.js';
import type { Network } from '../network/network.js';
import type { PeerServices } from '../peer-services.js';
import { ProviderLoop, type ProviderRole } from './provider-loop.js';

export interface LeaseServicesDeps {
  config: Config;
  ledger: Ledger;
  db: Database;
  identity: { seed: Uint8Array; address: string };
  network: Network;
  peer: PeerServices;
  logger: Logger;
  registry: Registry;
}

export interface LeaseServices {
  vmHandlers: VmHandlers;
  stop(): Promise<void>;
}

/** Provider mode refuses to start without timekeepers (provider.md §1). */
export const NO_TIMEKEEPERS = 'provider mode requires sys.timekeepers on the state chain';

export async function startLeaseServices(d: LeaseServicesDeps): Promise<LeaseServices> {
  const { config, ledger, logger } = d;
  const loopMs = config.dev ? 1_000 : 5_000;
  const log = logger.child({ component: 'provider' });
  let reconciler: Reconciler | null = null;
  let backend: VmBackend | null = null;
  let gateway: SshGateway | null = null;
  let role: ProviderRole | undefined;

  if (config.provider.enabled) {
    if (!ledger.statechainImpl.asOf(nowNs()).timekeepers) throw new Error(NO_TIMEKEEPERS);
    backend = vmBackend(config, log);
    await backend.check();
    reconciler = new Reconciler({
      backend,
      records: new VmRecords(d.db),
      leases: leaseView(ledger, d.identity.address),
      gatewayAuthorizedKey: gatewayVmPublicKeyLine(config.dataDir),
      logger,
      registry: d.registry,
    });
    await reconciler.start(config.dev ? 1_000 : 10_000);
    const rec = reconciler;
    role = {
      policy: {
        capacity: { vcpus: BigInt(config.provider.vcpus), memory_mb: BigInt(config.provider.memoryMb), disk_gb: BigInt(config.provider.diskGb) },
        minDurationSecs: config.provider.policy.minLeaseDurationSecs ?? 0n,
        maxDurationSecs: config.provider.policy.maxLeaseDurationSecs ?? 0n,
        minCost: config.provider.policy.minLeaseCost,
        maxCost: config.provider.policy.maxLeaseCost,
        maxConcurrentLeases: config.provider.policy.maxConcurrentLeases,
      },
      vms: {
        ensure: async (lease) => {
          const r = await rec.ensure(leaseFacts(lease, ledger));
          return { status: r.status, error: r.error };
        },
        release: async (hash) => void (await rec.teardown(hash)),
        committed: () => {
          const c = rec.committed();
          return { count: c.count, used: { vcpus: BigInt(c.used.vcpus), memory_mb: BigInt(c.used.memoryMb), disk_gb: BigInt(c.used.diskGb) } };
        },
      },
    };
  }

  const access: LeaseAccess = {
    localProvider: d.identity.address,
    lease: (hash) => {
      const l = ledger.lease(hash, nowNs());
      return l ? { state: l.state, provider: l.provider, accessPubKey: l.access_pub_key } : null;
    },
    vmEndpoint: async (hash) => {
      const r = reconciler?.get(hash);
      return r && r.status === 'running' && r.ssh ? r.ssh : null;
    },
  };
  const remote: RemoteTunnelDialer = {
    open: async (provider, leaseHash, signature) => {
      const peer = d.peer.directory.lookup(provider)?.node_peer;
      if (!peer) throw new Error('provider peer not found');
      return d.network.openTunnel(peer, leaseHash, signature);
    },
  };
  const tunnels = new TunnelRegistry();
  const tunnel = tunnelRoute({ access, remote, clientKey, logger: logger.child({ component: 'tunnel' }), registry: tunnels, metrics: d.registry });
  gateway = await startSshGateway({
    dataDir: config.dataDir,
    access,
    clientKeyOfIp: keyOfIp,
    logger: logger.child({ component: 'ssh-gateway' }),
    metrics: d.registry,
    port: config.provider.sshPort,
    bind: config.provider.sshBind,
  });

  const loop = new ProviderLoop({
    ledger,
    governanceAt: (t) => ledger.statechainImpl.asOf(t),
    identity: d.identity,
    difficulty: () => {
      const floor = ledger.statechainImpl.asOf(nowNs()).minPowDifficulty;
      return floor > config.powDifficulty ? floor : config.powDifficulty;
    },
    attestations: {
      gather: async (id) => {
        const r = await d.peer.timekeeper.gatherAttestations(id);
        const need = r.timekeepers?.threshold ?? 1;
        if (r.attestations.length < need) throw new Error(`only ${r.attestations.length} attestations gathered, need ${need}`);
        return r.attestations;
      },
    },
    ...(role ? { provider: role } : {}),
    autoSettle: config.provider.autoSettle,
    now: nowNs,
    log,
  });
  const tick = (): void => {
    try {
      loop.tick();
    } catch (err) {
      log.error({ error: err instanceof Error ? err.message : String(err) }, 'provider tick failed');
    }
  };
  const timer = setInterval(tick, loopMs);
  // React at once to lease blocks instead of waiting for the next tick; when a lease leaves
  // `accepted`, its tunnels and gateway sessions close and its VM is torn down.
  const unsubscribe = ledger.subscribe((e) => {
    if (e.kind !== 'block.applied' || !e.block.type.startsWith('lease')) return;
    setImmediate(tick);
    const hash = e.block.type === 'lease' ? e.block.hash : e.block.source;
    const state = ledger.lease(hash, nowNs())?.state;
    if (state && state !== 'accepted' && state !== 'created') {
      tunnels.closeLease(hash);
      gateway?.closeLease(hash);
      void reconciler?.reconcile().catch((err) => log.error({ error: String(err) }, 'vm reconcile failed'));
    }
  });

  const vmHandlers: VmHandlers = {
    tunnel: tunnel.handler,
    ...(reconciler
      ? providerVmHandlers({
          records: reconciler,
          leases: leaseView(ledger, d.identity.address),
          adminToken: config.adminToken,
          verifyVmReadProof: (key, challenge, sig) => d.peer.readAuth.verifyVmReadProof(key, challenge, sig),
        })
      : {}),
  };

  return {
    vmHandlers,
    async stop() {
      clearInterval(timer);
      unsubscribe();
      await gateway?.close();
      // The reconciler stops its loop only: tenant VMs keep running across an agent restart.
      await reconciler?.stop();
      await backend?.close?.();
    },
  };
}

function vmBackend(config: Config, log: Logger): VmBackend {
  const name = config.provider.vmBackend ?? 'docker';
  if (name === 'docker') return new DockerBackend({ image: dockerImageRef(dockerImageSettings()), docker: new Docker() });
  if (name === 'libvirt') {
    // The domain type is a setting: `kvm` on real hosts, `qemu` (software emulation) elsewhere.
    const domainType = (process.env.NETNODE_LIBVIRT_DOMAIN_TYPE ?? (kvmUsable() ? 'kvm' : 'qemu')) as 'kvm' | 'qemu';
    log.info({ domain_type: domainType }, 'libvirt backend');
    return new LibvirtBackend({
      image: libvirtImage({ dir: process.env.NETNODE_LIBVIRT_IMAGE_DIR ?? DEFAULT_LIBVIRT_IMAGE_DIR }),
      domainType,
      logger: log,
    });
  }
  throw new Error(`unknown --vm-backend "${name}": use docker or libvirt`);
}

function kvmUsable(): boolean {
  try {
    accessSync('/dev/kvm', fsConstants.R_OK | fsConstants.W_OK);
    return existsSync('/dev/kvm');
  } catch {
    return false;
  }
}

function leaseFacts(l: Lease, ledger: Ledger): LeaseFacts {
  return {
    leaseHash: l.lease_hash,
    state: l.state,
    vcpus: Number(l.vcpus),
    memoryMb: Number(l.memory_mb),
    diskGb: Number(l.disk_gb),
    accessPubKey: l.access_pub_key,
    expiresAt: l.expires_at,
    settleGraceNs: ledger.leaseTiming.lease_settle_grace_ns,
  };
}

/** The ledger as provisioning sees it (provisioning/lease-view.ts). */
function leaseView(ledger: Ledger, self: string): LeaseView {
  return {
    get: (hash) => {
      const l = ledger.lease(hash, nowNs());
      return l ? leaseFacts(l, ledger) : null;
    },
    listProvided: () => {
      const out: LeaseFacts[] = [];
      const now = nowNs();
      for (let offset = 0; ; offset += 1000) {
        const page = ledger.leases({ offset, limit: 1000, now });
        for (const l of page) if (l.provider === self) out.push(leaseFacts(l, ledger));
        if (page.length < 1000) return out;
      }
    },
  };
}
