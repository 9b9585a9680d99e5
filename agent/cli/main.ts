// `netnode <command> [flags]`: one table maps each subcommand to its module, loaded on use so a
// command never pays for (or breaks on) another's dependencies.

type Command = (argv: string[]) => Promise<number>;

const COMMANDS: Record<string, () => Promise<Command>> = {
  node: async () => (await import('./node-command.js')).runNodeCommand,
  image: async () => (await import('./image.js')).runImageCommand,
  wallet: async () => (await import('./account-commands.js')).accountCommands.wallet!,
  send: async () => (await import('./account-commands.js')).accountCommands.send!,
  receive: async () => (await import('./account-commands.js')).accountCommands.receive!,
  mint: async () => (await import('./account-commands.js')).accountCommands.mint!,
  burn: async () => (await import('./account-commands.js')).accountCommands.burn!,
  lease: async () => (await import('./account-commands.js')).accountCommands.lease!,
  vms: async () => (await import('./account-commands.js')).accountCommands.vms!,
  ssh: async () => (await import('./ssh.js')).runSshCommand,
  tunnel: async () => (await import('./tunnel.js')).runTunnelCommand,
};

function usage(): string {
  return `usage: netnode <command> [flags]\ncommands: ${Object.keys(COMMANDS).join(', ')}\n`;
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage());
    return name === undefined ? 2 : 0;
  }
  const load = COMMANDS[name];
  if (!load) {
    process.stderr.write(`netnode: unknown command ${JSON.stringify(name)}\n${usage()}`);
    return 2;
  }
  return (await load())(rest);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    // People get the message; the stack only when asked for (NETNODE_DEBUG=1).
    const detail = err instanceof Error ? (process.env.NETNODE_DEBUG ? (err.stack ?? err.message) : err.message) : String(err);
    process.stderr.write(`netnode: ${detail}\n`);
    process.exitCode = 1;
  },
);
