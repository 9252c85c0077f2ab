/**
 * `npm run devnet -- --upgrade-program URL`: the program-upgrade rehearsal from a shell (docs/devnet.md
 * "Breach rehearsals"): devnet_upgradeProgram on the running node at URL, its answer printed as
 * JSON (the new deployment slot and hash a watching server must report). Exit 0, or 1 with the
 * node's error.
 */

const CALL_TIMEOUT_MS = 10_000;

export async function upgradeProgramAt(url: string): Promise<number> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'devnet_upgradeProgram', params: [{}] });
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    });
    const answer = (await response.json()) as { result?: unknown; error?: { message?: string } };
    if (answer.result === undefined) {
      process.stderr.write(`devnet: devnet_upgradeProgram at ${url} failed: ${answer.error?.message ?? `HTTP ${response.status}`}\n`);
      return 1;
    }
    process.stdout.write(`${JSON.stringify(answer.result)}\n`);
    return 0;
  } catch (err) {
    process.stderr.write(`devnet: ${url} did not answer devnet_upgradeProgram: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}
