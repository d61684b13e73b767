import { join } from "node:path";

/** Where `serve` keeps the API's generated CA and server certificate: `<DataDir>/credentials/tls`. */
export const apiTlsDir = (dataDir: string): string => join(dataDir, "credentials", "tls");

/** The generated CA's certificate, which clients trust (the CLI on this machine finds it here). */
export const apiCaPath = (dataDir: string): string => join(apiTlsDir(dataDir), "ca.crt");
