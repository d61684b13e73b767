/**
 * A NATS credentials file (what `nsc` writes and nats.js's credsAuthenticator, the nats CLI's
 * `--creds` and every NATS client read): a user's JWT and its key's seed.
 */
export function credsFileText(jwt: string, seed: string): string {
  return `-----BEGIN NATS USER JWT-----
${jwt}
------END NATS USER JWT------

************************* IMPORTANT *************************
NKEY Seed printed below can be used to sign and prove identity.
NKEYs are sensitive and should be treated as secrets.

-----BEGIN USER NKEY SEED-----
${seed}
------END USER NKEY SEED------

*************************************************************
`;
}
