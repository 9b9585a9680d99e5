// THE route list of the node, in the manifest order of api.md §3. The router is built from this
// list and `GET /` renders it, so the manifest is always the exact description of this node (§15).

import { accountRoutes, type AccountRouteDeps } from './accounts.js';
import { attestationRoutes, type AttestationRouteDeps } from './attestation.js';
import { blockRoutes, type BlockRouteDeps } from './blocks.js';
import { certificateRoutes, type CertificateRouteDeps } from './certificates.js';
import { chatRoutes, type ChatRouteDeps } from './chat.js';
import { directoryRoutes, type DirectoryRouteDeps } from './directory.js';
import { healthRoutes } from './health.js';
import { sendJson } from './http.js';
import { leaseRoutes, type LeaseRouteDeps } from './leases.js';
import { nodeRoutes, type NodeRouteDeps } from './node.js';
import { providerRoutes, type ProviderRouteDeps } from './providers.js';
import type { Route } from './route.js';
import { statechainRoutes, type StatechainRouteDeps } from './statechain.js';
import { vmRoutes, type VmRouteDeps } from './vms.js';
import type { NodeStatus } from '../status.js';

export interface ManifestInfo {
  version: string;
  networkId: string;
  address: string;
  nodeId: string;
}

export interface RouteDeps {
  manifest: ManifestInfo;
  node: NodeRouteDeps;
  status: NodeStatus;
  accounts: AccountRouteDeps;
  blocks: BlockRouteDeps;
  providers: ProviderRouteDeps;
  certificates: CertificateRouteDeps;
  leases: LeaseRouteDeps;
  attestation: AttestationRouteDeps;
  vms: VmRouteDeps;
  statechain: StatechainRouteDeps;
  directory: DirectoryRouteDeps;
  chat: ChatRouteDeps;
  /** Routes appended after the table of api.md §3 (benchmarks add a baseline route); listed by `GET /` too. */
  extra?: readonly Route[];
}

export function buildRoutes(deps: RouteDeps): Route[] {
  const node = nodeRoutes(deps.node);
  const health = healthRoutes(deps.status);
  const accounts = accountRoutes(deps.accounts);
  const blocks = blockRoutes(deps.blocks);
  const leases = leaseRoutes(deps.leases);
  const vms = vmRoutes(deps.vms);
  const sc = statechainRoutes(deps.statechain);

  const manifest: Route = {
    method: 'GET',
    path: '/',
    description: 'This route table',
    handler: (_request, reply) =>
      sendJson(reply, 200, {
        name: 'net',
        version: deps.manifest.version,
        network_id: deps.manifest.networkId,
        address: deps.manifest.address,
        node_id: deps.manifest.nodeId,
        endpoints: routes.map((r) => ({ method: r.method, path: r.path, description: r.description })),
      }),
  };

  const routes: Route[] = [
    manifest,
    node.info,
    node.networkActivations,
    node.networkReadiness,
    health.health,
    health.ready,
    accounts.list,
    accounts.balance,
    accounts.chain,
    accounts.keyset,
    accounts.reputation,
    accounts.reputations,
    node.frontiers,
    node.supply,
    node.pending,
    node.pendingFor,
    blocks.recent,
    blocks.byHash,
    ...blocks.submit,
    node.conflicts,
    node.conflictsFor,
    node.delegation,
    ...providerRoutes(deps.providers),
    ...certificateRoutes(deps.certificates),
    leases.list,
    leases.byHash,
    leases.requestLease,
    ...attestationRoutes(deps.attestation),
    vms.list,
    vms.get,
    vms.tunnel,
    sc.tip,
    sc.blocks,
    sc.blockAt,
    sc.kv,
    sc.kvKey,
    sc.keyset,
    sc.submit,
    ...directoryRoutes(deps.directory),
    ...chatRoutes(deps.chat),
    ...(deps.extra ?? []),
  ];
  return routes;
}
