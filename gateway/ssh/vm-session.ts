// The gateway's own hop into a VM for `session` channels (provider.md §6): one ssh2 client
// connection per gateway connection, as root with the provider's gateway key, and the bridge that
// forwards a session's requests and data to a channel on it.

import ssh2, { type Client, type ClientChannel, type PseudoTtyOptions, type ServerChannel, type Session } from 'ssh2';
import type { VmEndpoint } from '../lease-access.js';

export const PREFERRED_CIPHERS = [
  'aes128-gcm@openssh.com',
  'aes256-gcm@openssh.com',
  'chacha20-poly1305@openssh.com',
  'aes128-ctr',
  'aes192-ctr',
  'aes256-ctr',
] as const;

const VM_LOGIN_TIMEOUT_MS = 10_000;

/** A lazily opened root login into one VM, shared by the sessions of one gateway connection. */
export class VmLogin {
  private client: Promise<Client> | null = null;
  private closed = false;

  constructor(
    private readonly endpoint: () => Promise<VmEndpoint | null>,
    private readonly privateKey: string,
  ) {}

  get(): Promise<Client> {
    this.client ??= this.open();
    return this.client;
  }

  close(): void {
    this.closed = true;
    void this.client?.then((c) => c.end(), () => {});
  }

  private async open(): Promise<Client> {
    const ep = await this.endpoint();
    if (!ep) throw new Error('vm not found');
    return await new Promise<Client>((resolve, reject) => {
      const client = new ssh2.Client();
      client.once('ready', () => {
        if (this.closed) client.end();
        resolve(client);
      });
      client.once('error', reject);
      client.on('error', () => {}); // later errors end the connection; channels see 'close'
      client.connect({
        host: ep.host,
        port: ep.port,
        username: 'root',
        privateKey: this.privateKey,
        readyTimeout: VM_LOGIN_TIMEOUT_MS,
        // The VM is the provider's own machine, reached over a host-only path (provider.md §5.1).
        hostVerifier: () => true,
        algorithms: { cipher: [...PREFERRED_CIPHERS] },
      });
    });
  }
}

interface PtyRequest {
  cols: number;
  rows: number;
  width: number;
  height: number;
  term: string;
  modes: PseudoTtyOptions['modes'];
}

/**
 * Serve one gateway `session` channel through a channel of `login`: pty-req, env and window-change
 * are recorded or forwarded, shell/exec/subsystem open the matching VM channel, signals are passed
 * on, and the VM's exit-status / exit-signal comes back before the channel closes.
 */
export function bridgeSession(session: Session, login: VmLogin, idleMs: number): void {
  let pty: PtyRequest | null = null;
  const env: Record<string, string> = {};
  let vmChannel: ClientChannel | null = null;

  session.on('pty', (accept, _reject, info) => {
    pty = { cols: info.cols, rows: info.rows, width: info.width, height: info.height, term: info.term, modes: info.modes };
    accept?.();
  });
  session.on('env', (accept, _reject, info) => {
    env[info.key] = info.val;
    accept?.();
  });
  session.on('window-change', (accept, _reject, info) => {
    if (vmChannel) vmChannel.setWindow(info.rows, info.cols, info.height, info.width);
    else if (pty) Object.assign(pty, { rows: info.rows, cols: info.cols, width: info.width, height: info.height });
    accept?.();
  });
  session.on('signal', (accept, _reject, info) => {
    vmChannel?.signal(info.name);
    accept?.();
  });

  type Opener = (client: Client, cb: (err: Error | undefined, channel: ClientChannel) => void) => void;
  // Accepted at once: clients send stdin right behind the request, and the channel holds it (SSH
  // window) until the VM channel exists. A VM that cannot be reached ends it with status 255.
  const start = (accept: () => ServerChannel, open: Opener) => {
    const outer = accept();
    const fail = (err: Error) => {
      outer.stderr.write(`netnode gateway: cannot open the session in the VM: ${err.message}\r\n`);
      outer.exit(255);
      outer.end();
    };
    login.get().then(
      (client) =>
        open(client, (err, channel) => {
          if (err) return fail(err);
          vmChannel = channel;
          bridgeChannels(outer, channel, idleMs);
        }),
      fail,
    );
  };
  const ptyOptions = (): PseudoTtyOptions | false =>
    pty ? { rows: pty.rows, cols: pty.cols, width: pty.width, height: pty.height, term: pty.term, modes: pty.modes } : false;

  session.on('shell', (accept) => start(accept, (client, cb) => client.shell(ptyOptions(), { env }, cb)));
  session.on('exec', (accept, _reject, info) =>
    start(accept, (client, cb) => {
      const window = ptyOptions();
      client.exec(info.command, window ? { pty: window, env } : { env }, cb);
    }),
  );
  session.on('subsystem', (accept, reject, info) => {
    if (info.name !== 'sftp') return reject?.();
    start(accept, (client, cb) => client.subsys('sftp', cb));
  });
}

function bridgeChannels(outer: ServerChannel, inner: ClientChannel, idleMs: number): void {
  const timer = setTimeout(() => {
    outer.close();
    inner.close();
  }, idleMs);
  timer.unref();
  const idle = () => timer.refresh();
  let exit: { code: number } | { signal: string; core: boolean; desc: string } | null = null;
  outer.on('data', idle);
  inner.on('data', idle);
  inner.stderr.on('data', idle);

  outer.pipe(inner); // client EOF → EOF to the VM; the VM may still answer
  inner.pipe(outer, { end: false });
  inner.stderr.pipe(outer.stderr, { end: false });

  inner.on('exit', (code: number | null, signal?: string, core?: boolean, desc?: string) => {
    exit = code !== null && code !== undefined ? { code } : { signal: signal ?? 'KILL', core: core ?? false, desc: desc ?? '' };
  });
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
    if (exit && 'code' in exit) outer.exit(exit.code);
    else if (exit) outer.exit(exit.signal, exit.core, exit.desc);
    outer.end(); // EOF and close (ssh2 server channels close on finish)
  };
  inner.on('close', () => (inner.readableEnded ? finish() : inner.once('end', finish)));
  outer.on('close', () => {
    clearTimeout(timer);
    inner.close();
  });
}
