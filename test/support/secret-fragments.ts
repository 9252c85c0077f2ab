/**
 * Every 8-character piece of a secret (stepping by 4), leaving out pieces of only separators: a
 * leak of any part of a secret contains one of them. For checking outputs, never for printing.
 */
function secretFragments(secret: string): string[] {
  const fragments: string[] = [];
  for (let i = 0; i + 8 <= secret.length; i += 4) {
    const piece = secret.slice(i, i + 8);
    if (!/^[\s,[\]{}"-]*$/.test(piece) && piece.trim().length === 8) fragments.push(piece);
  }
  return fragments;
}

/** The fragments of `secrets` that `output` contains (none, when nothing leaked). */
export function leakedFragments(output: string, secrets: readonly string[]): string[] {
  return secrets.flatMap(secretFragments).filter((fragment) => output.includes(fragment));
}
