import { describe, expect, it } from 'vitest';
import { ACCOUNT_DISCRIMINATORS, DEFAULT_PROGRAM_ID, entryOffset, entrySize, trackerAccountSize } from '../../../src/chain/codec/layout.js';
import { INSTRUCTION_DISCRIMINATORS } from '../../../src/chain/codec/instructions.js';
import { PublicKey } from '@solana/web3.js';
import { sha256Prefix } from './hand-bytes.js';

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

describe('account discriminators', () => {
  it.each([
    ['DepositTracker', 'f7350db49ae8e1fa'],
    ['WithdrawTracker', 'b85cdf0f4deba5d6'],
    ['TokenPair', '11d62db0e595c547'],
  ] as const)('%s is sha256("account:%s")[0..8] = %s', (name, protocolHex) => {
    expect(sha256Prefix(`account:${name}`)).toBe(protocolHex);
    expect(hex(ACCOUNT_DISCRIMINATORS[name])).toBe(protocolHex);
  });
});

describe('instruction discriminators', () => {
  it.each([
    ['ack_deposit', '59a927a74a8affcf'],
    ['ack_withdraw', '8b205c923efaf7e6'],
    ['cleanup_deposit', 'cfca1f62257a91a5'],
    ['initialize_deposit_tracker', '5cb3dbc8e59b0a28'],
    ['initialize_withdraw_tracker', 'ac7607c1208ca476'],
    ['deposit', 'f223c68952e1f2b6'],
    ['withdraw', 'b712469c946da122'],
    ['set_token_pair', '44b0e3b3e5c1e29c'],
    ['reset_pending', '1cf6ba497b77d2dc'],
  ] as const)('%s is sha256("global:%s")[0..8] = %s', (name, protocolHex) => {
    expect(sha256Prefix(`global:${name}`)).toBe(protocolHex);
    expect(hex(INSTRUCTION_DISCRIMINATORS[name])).toBe(protocolHex);
  });

  it('covers exactly the nine instructions of PROTOCOL.md', () => {
    expect(Object.keys(INSTRUCTION_DISCRIMINATORS)).toHaveLength(9);
  });
});

describe('tracker geometry', () => {
  it('places entry i at 848 + i * ENTRY_SIZE', () => {
    expect(entrySize('DepositTracker')).toBe(160);
    expect(entrySize('WithdrawTracker')).toBe(144);
    expect(entryOffset('DepositTracker', 0)).toBe(848);
    expect(entryOffset('DepositTracker', 3)).toBe(848 + 480);
    expect(entryOffset('WithdrawTracker', 3)).toBe(848 + 432);
  });

  it('sizes a tracker account as 848 + capacity * ENTRY_SIZE', () => {
    expect(trackerAccountSize('DepositTracker', 0)).toBe(848);
    expect(trackerAccountSize('DepositTracker', 50_000)).toBe(848 + 8_000_000);
    expect(trackerAccountSize('WithdrawTracker', 10)).toBe(848 + 1440);
  });

  it('uses the default program id of PROTOCOL.md, a valid 32-byte key', () => {
    expect(new PublicKey(DEFAULT_PROGRAM_ID).toBytes()).toHaveLength(32);
    expect(DEFAULT_PROGRAM_ID).toBe('BridgeProgram111111111111111111111111111111');
  });
});
