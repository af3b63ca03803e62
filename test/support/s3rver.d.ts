/** The part of s3rver (a fake S3 server, no types of its own) the tests use. */
declare module 's3rver' {
  interface S3rverOptions {
    readonly port?: number;
    readonly address?: string;
    readonly directory: string;
    readonly silent?: boolean;
  }
  export default class S3rver {
    constructor(options: S3rverOptions);
    run(): Promise<{ address: string; port: number }>;
    close(): Promise<void>;
  }
}
