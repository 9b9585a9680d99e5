// Resource floors of provider.md §5.1: every machine gets at least 1 vCPU, 512 MiB and 5 GiB,
// even when the lease asks for less (the lease stays priced on the requested numbers).

export const MIN_VCPUS = 1;
export const MIN_MEMORY_MB = 512;
export const MIN_DISK_GB = 5;

export interface Resources {
  vcpus: number;
  memoryMb: number;
  diskGb: number;
}

export function withFloors(r: Resources): Resources {
  return {
    vcpus: Math.max(MIN_VCPUS, r.vcpus),
    memoryMb: Math.max(MIN_MEMORY_MB, r.memoryMb),
    diskGb: Math.max(MIN_DISK_GB, r.diskGb),
  };
}
