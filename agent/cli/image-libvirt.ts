// `netnode image build --backend libvirt [--image-dir DIR] [--mirror URL] [--suite NAME]`:
// builds the libvirt base image unless it exists, then prints the qcow2 path on stdout.

import { parseArgs } from 'node:util';
import {
  DEFAULT_LIBVIRT_IMAGE_DIR,
  buildLibvirtImage,
} from '../../provisioning/images/libvirt-image.js';

export async function runLibvirtImageBuild(argv: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        backend: { type: 'string' },
        'image-dir': { type: 'string' },
        mirror: { type: 'string' },
        suite: { type: 'string' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    process.stderr.write(`image build: ${(err as Error).message}\n`);
    return 2;
  }
  if (values.backend !== undefined && values.backend !== 'libvirt') {
    process.stderr.write(`image build: this command builds the libvirt image, not "${values.backend}"\n`);
    return 2;
  }
  const dir = values['image-dir'] ?? process.env.NETNODE_LIBVIRT_IMAGE_DIR ?? DEFAULT_LIBVIRT_IMAGE_DIR;
  const started = Date.now();
  try {
    const image = await buildLibvirtImage(
      { dir, mirror: values.mirror, suite: values.suite },
      (line) => process.stderr.write(`image build: ${line}\n`),
    );
    const took = ((Date.now() - started) / 1000).toFixed(0);
    process.stderr.write(
      image.built ? `image build: built ${image.id} in ${took} s\n` : `image build: ${image.id} is up to date\n`,
    );
    process.stdout.write(`${image.qcow2}\n`);
    return 0;
  } catch (err) {
    process.stderr.write(`image build: ${(err as Error).message}\n`);
    return 1;
  }
}
