// `netnode image build [--backend docker|libvirt] …`: builds a VM base image idempotently. The docker
// image is handled here (provisioning/images/docker-image.ts); `--backend libvirt` is handed, with its
// own flags, to image-libvirt.ts. `argv` is what follows `image`.

import { parseArgs } from 'node:util';
import Docker from 'dockerode';
import { buildDockerImage, dockerImageSettings } from '../../provisioning/images/docker-image.js';

const USAGE = 'usage: netnode image build [--backend docker] [--image <name>] [--mirror <url>] [--cache-dir <dir>]\n' +
  '       netnode image build --backend libvirt [--image-dir <dir>] [--mirror <url>] [--suite <name>]';

function backendOf(args: string[]): string {
  const i = args.findIndex((a) => a === '--backend' || a.startsWith('--backend='));
  if (i < 0) return 'docker';
  return args[i]!.includes('=') ? args[i]!.slice('--backend='.length) : (args[i + 1] ?? '');
}

export async function runImageCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== 'build') {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const backend = backendOf(rest);
  if (backend === 'libvirt') return (await import('./image-libvirt.js')).runLibvirtImageBuild(rest);
  if (backend !== 'docker') {
    process.stderr.write(`image build: unknown backend ${JSON.stringify(backend)}\n${USAGE}\n`);
    return 2;
  }
  let values;
  try {
    ({ values } = parseArgs({
      args: rest,
      options: {
        backend: { type: 'string' },
        image: { type: 'string' },
        mirror: { type: 'string' },
        'cache-dir': { type: 'string' },
      },
    }));
  } catch (err) {
    process.stderr.write(`image build: ${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const settings = dockerImageSettings({
    ...(values.image !== undefined ? { name: values.image } : {}),
    ...(values.mirror !== undefined ? { mirror: values.mirror } : {}),
    ...(values['cache-dir'] !== undefined ? { cacheDir: values['cache-dir'] } : {}),
  });
  try {
    const result = await buildDockerImage(new Docker(), settings, (line) => process.stderr.write(`${line}\n`));
    process.stdout.write(`${result.ref}\n`);
    return 0;
  } catch (err) {
    process.stderr.write(`image build failed: ${(err as Error).message}\n`);
    return 1;
  }
}
