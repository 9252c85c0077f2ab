import { describe, expect, it } from 'vitest';
import { isPkcs11Uri, parsePkcs11Uri } from '../../../src/signer/pkcs11/pkcs11-uri.js';
import { isBridgeError } from '../../../src/errors.js';

const MODULE = 'module-path=/usr/lib/softhsm/libsofthsm2.so';
const PIN_SECRET = 'PIN-4b1d-DO-NOT-LEAK';

function problemOf(uri: string): string {
  try {
    parsePkcs11Uri(uri);
  } catch (err) {
    if (isBridgeError(err, 'CONFIG__INVALID') && err.context.problems.length === 1) return err.context.problems[0]!;
    throw err;
  }
  throw new Error(`expected ${uri} to be refused`);
}

describe('parsePkcs11Uri (RFC 7512)', () => {
  it('reads the path attributes that select the token and key, and the module and PIN file', () => {
    const uri = parsePkcs11Uri(
      `pkcs11:token=bridge%20one;object=authority;id=%01%a0;serial=dbd5aa5d;slot-id=7;type=private?${MODULE}&pin-source=file:/run/secrets/pin`,
    );
    expect(uri).toEqual({
      modulePath: '/usr/lib/softhsm/libsofthsm2.so',
      selection: { token: 'bridge one', object: 'authority', id: Uint8Array.from([0x01, 0xa0]), serial: 'dbd5aa5d', slotId: 7 },
      pin: { kind: 'file', path: '/run/secrets/pin' },
    });
  });

  it('takes pin-source as file:///path or a bare absolute path, and pin-value percent-decoded', () => {
    expect(parsePkcs11Uri(`pkcs11:object=a?${MODULE}&pin-source=file:///secrets/pin`).pin).toEqual({ kind: 'file', path: '/secrets/pin' });
    expect(parsePkcs11Uri(`pkcs11:object=a?${MODULE}&pin-source=/secrets/pin`).pin).toEqual({ kind: 'file', path: '/secrets/pin' });
    expect(parsePkcs11Uri(`pkcs11:object=a?${MODULE}&pin-value=12%2634`).pin).toEqual({ kind: 'value', value: '12&34' });
  });

  it('recognises the scheme case-insensitively and nothing else', () => {
    expect(isPkcs11Uri('PKCS11:object=a')).toBe(true);
    expect(isPkcs11Uri('/secrets/pkcs11:authority.json')).toBe(false);
  });

  it.each([
    [`pkcs11:object=a?pin-value=1234`, 'module-path is missing'],
    [`pkcs11:token=bridge?${MODULE}&pin-value=1234`, 'names no key; add object='],
    [`pkcs11:object=a?${MODULE}`, 'gives no PIN; add pin-source=file:'],
    [`pkcs11:object=a?${MODULE}&pin-source=file:pin.txt`, 'pin-source must be a file: an absolute path'],
    [`pkcs11:object=a;objekt=b?${MODULE}&pin-value=1`, 'unsupported path attribute "objekt"; supported: token, object, id, serial, slot-id, type'],
    [`pkcs11:object=a;object=b?${MODULE}&pin-value=1`, 'object is given twice'],
    [`pkcs11:object=a;slot-id=x?${MODULE}&pin-value=1`, 'slot-id is not a decimal slot number'],
    [`pkcs11:object=a;type=public?${MODULE}&pin-value=1`, 'type=public cannot sign'],
    [`pkcs11:object=a%zz?${MODULE}&pin-value=1`, 'object has a malformed percent-encoding'],
    [`pkcs11:object=%ff?${MODULE}&pin-value=1`, 'object is not UTF-8 once percent-decoded'],
    [`pkcs11:object?${MODULE}&pin-value=1`, 'path attribute "object" has no value'],
  ])('refuses %s naming the variable and what is wrong', (uri, problem) => {
    const line = problemOf(uri);
    expect(line.startsWith('BRIDGE_AUTHORITY_KEYPAIR: PKCS#11 URI: ')).toBe(true);
    expect(line).toContain(problem);
  });

  it('never quotes the PIN, whatever is wrong around it', () => {
    for (const uri of [
      `pkcs11:object=a?${MODULE}&pin-value=${PIN_SECRET}&pin-source=/p`,
      `pkcs11:object=a;bogus=1?${MODULE}&pin-value=${PIN_SECRET}`,
      `pkcs11:object=a?${MODULE}&pin-value=${PIN_SECRET}%g1`,
      `pkcs11:object=a?pin-value=${PIN_SECRET}`,
    ]) {
      expect(problemOf(uri)).not.toContain(PIN_SECRET);
    }
  });

  it("never quotes a query attribute name: an unencoded & turns the PIN's tail into one", () => {
    const line = problemOf(`pkcs11:object=a?${MODULE}&pin-value=PINzq7&TAIL${PIN_SECRET}`);
    expect(line).toBe(
      'BRIDGE_AUTHORITY_KEYPAIR: PKCS#11 URI: an attribute of the query (not quoted: a query may hold a secret; percent-encode & as %26 inside a value) has no value (expected name=value)',
    );
    expect(line).not.toContain('TAIL');
    for (const uri of [
      `pkcs11:object=a?${MODULE}&pin-value=PINzq7&TAIL${PIN_SECRET}=x`,
      `pkcs11:object=a?${MODULE}&pin-value=1&TAIL${PIN_SECRET}=x`,
    ]) {
      expect(problemOf(uri)).not.toContain(PIN_SECRET);
    }
  });
});
