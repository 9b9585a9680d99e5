// Child process of ledger-durability.test.ts: applies send/receive blocks to a ledger store at
// argv[2] forever (or argv[3] blocks), printing each applied block's hash on its own line only after
// `ledger.submit` returned, i.e. after its transaction committed. The parent SIGKILLs it mid-run.
import { computeBlockHash } from '../../ledger/codec/block.js';
import { hexToBytes } from '../../ledger/codec/hex.js';
import { accountAddress } from '../../ledger/crypto/address.js';
import { publicKeyFromSeed, signEd25519 } from '../../ledger/crypto/ed25519.js';
import { solvePow } from '../../ledger/crypto/pow.js';
import { DEVNET_LEDGER_GENESIS, DEVNET_STATECHAIN_GENESIS, devSeed } from '../../ledger/genesis/devnet.js';
import { openLedger } from '../../ledger/ledger.js';
import { openDatabase } from '../../ledger/store/db.js';
import { emptyBlock, type Block } from '../../ledger/types.js';

const T0 = 1_800_000_000_000_000_000n;
const [dbPath, limitArg] = process.argv.slice(2);
const limit = limitArg ? Number(limitArg) : Infinity;

const db = openDatabase(dbPath!);
const ledger = openLedger({
  db,
  genesis: { ledger: DEVNET_LEDGER_GENESIS, statechain: DEVNET_STATECHAIN_GENESIS },
  powDifficulty: 2n,
  now: () => T0,
});

function seal(b: Block, seed: Uint8Array): Block {
  b.hash = computeBlockHash(b, ledger.networkId);
  b.signature = signEd25519(seed, hexToBytes(b.hash));
  b.pow_nonce = solvePow(b.hash, 2n);
  return b;
}

const dev1 = { seed: devSeed(1), address: accountAddress(publicKeyFromSeed(devSeed(1))) };
const recipients = [6, 7, 8, 9].map((n) => {
  const pub = publicKeyFromSeed(devSeed(n));
  return { seed: devSeed(n), pub, address: accountAddress(pub) };
});

let ts = T0;
for (let i = 0; i < limit; i++) {
  const r = recipients[i % recipients.length]!;
  const amount = 1_000n + BigInt(i);
  const send = seal(
    {
      ...emptyBlock('send'),
      account: dev1.address,
      previous: ledger.frontier(dev1.address)!,
      balance: ledger.runningBalance(dev1.address, 'XE') - amount,
      timestamp: ts++,
      asset: 'XE',
      destination: r.address,
      amount,
    },
    dev1.seed,
  );
  ledger.submit(send);
  process.stdout.write(`${send.hash}\n`);
  const opening = ledger.frontier(r.address) === null;
  const receive = seal(
    {
      ...emptyBlock('receive'),
      account: r.address,
      previous: ledger.frontier(r.address) ?? '0',
      balance: ledger.runningBalance(r.address, 'XE') + amount,
      timestamp: ts++,
      asset: 'XE',
      source: send.hash,
      pub_key: opening ? r.pub : '',
      representative: opening ? dev1.address : '',
    },
    r.seed,
  );
  ledger.submit(receive);
  process.stdout.write(`${receive.hash}\n`);
}
ledger.close();
db.close();
