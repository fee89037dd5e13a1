// The key CLI: `npm run keys -- <command>` (or `npx tsx bin/keys.ts <command>`). All logic is in tools/keys/.
import { run } from '../tools/keys/main';

void run(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  stdin: () => process.stdin,
}).then((code) => {
  process.exitCode = code;
});
