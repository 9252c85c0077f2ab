// Types of what scripts/bundle-server.mjs exports, for its test (test/install/bundle.test.ts).
import type { Plugin } from 'esbuild';

export declare const nodeFetchIsNodesFetch: Plugin;
export declare function externalPackages(dir?: string): string[];
export declare function targetFromEngines(dir?: string): string;
