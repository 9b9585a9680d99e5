// Open tunnels of this node (api.md §8.3 step 7 caps) and per lease, so that a lease that leaves
// `accepted` can have its tunnels closed (provider.md §7.2).

export const MAX_TUNNELS_PER_CLIENT = 8;
export const MAX_TUNNELS = 256;

export interface TunnelSlot {
  release(): void;
  /** Called by `closeLease`; set once the pipe exists. */
  onClose?: () => void;
}

export type ReserveResult = TunnelSlot | 'client cap' | 'node cap';

export class TunnelRegistry {
  private total = 0;
  private readonly perClient = new Map<string, number>();
  private readonly perLease = new Map<string, Set<TunnelSlot>>();

  constructor(
    private readonly maxPerClient = MAX_TUNNELS_PER_CLIENT,
    private readonly maxTotal = MAX_TUNNELS,
  ) {}

  get open(): number {
    return this.total;
  }

  reserve(clientKey: string, leaseHash: string): ReserveResult {
    const mine = this.perClient.get(clientKey) ?? 0;
    if (mine >= this.maxPerClient) return 'client cap';
    if (this.total >= this.maxTotal) return 'node cap';
    this.total++;
    this.perClient.set(clientKey, mine + 1);
    let released = false;
    const slot: TunnelSlot = {
      release: () => {
        if (released) return;
        released = true;
        this.total--;
        const n = (this.perClient.get(clientKey) ?? 1) - 1;
        if (n > 0) this.perClient.set(clientKey, n);
        else this.perClient.delete(clientKey);
        const set = this.perLease.get(leaseHash);
        set?.delete(slot);
        if (set?.size === 0) this.perLease.delete(leaseHash);
      },
    };
    let set = this.perLease.get(leaseHash);
    if (!set) this.perLease.set(leaseHash, (set = new Set()));
    set.add(slot);
    return slot;
  }

  /** Close every tunnel of a lease (it left `accepted`). */
  closeLease(leaseHash: string): void {
    for (const slot of [...(this.perLease.get(leaseHash) ?? [])]) {
      slot.onClose?.();
      slot.release();
    }
  }
}
