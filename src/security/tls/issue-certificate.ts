import { createHash, randomBytes, sign, type KeyObject } from "node:crypto";
import { isIP } from "node:net";
import {
  boolean,
  explicit,
  implicit,
  objectId,
  octetString,
  sequence,
  set,
  smallInteger,
  tlv,
  time,
  unsignedInteger,
  utf8String,
} from "./der.ts";

export interface CertificateRequest {
  /** The subject's common name. */
  readonly commonName: string;
  /** The key the certificate is for (an EC P-256 key's public half, or an RSA key's for KurrentDB). */
  readonly publicKey: KeyObject;
  /** Who signs: the CA's name and private key; absent, the certificate signs itself (a CA). */
  readonly issuer?: { readonly commonName: string; readonly privateKey: KeyObject; readonly publicKey: KeyObject };
  /** The signing key when there is no issuer (the self-signed CA's own). */
  readonly privateKey?: KeyObject;
  readonly notBefore: Date;
  readonly notAfter: Date;
  /** A CA may sign server certificates (and nothing deeper); the others are for what `usages` says. */
  readonly ca: boolean;
  /**
   * What a certificate that is no CA is for (default: a TLS server only). A server that also dials its peers as a
   * client (nats-server's cluster routes, which verify both ends) needs both; a client certificate, `client` alone.
   */
  readonly usages?: readonly CertificateUsage[];
  /** Host names and IP addresses the server certificate is good for. */
  readonly names?: readonly string[];
}

export type CertificateUsage = "server" | "client";

/** The extended key usages' object ids (RFC 5280, 4.2.1.12): id-kp-serverAuth, id-kp-clientAuth. */
export const USAGE_OIDS: Readonly<Record<CertificateUsage, string>> = {
  server: "1.3.6.1.5.5.7.3.1",
  client: "1.3.6.1.5.5.7.3.2",
};

const ECDSA_WITH_SHA256 = sequence(objectId("1.2.840.10045.4.3.2"));
const ORGANIZATION = "Shoal";

const name = (commonName: string): Buffer =>
  sequence(
    set(sequence(objectId("2.5.4.10"), utf8String(ORGANIZATION))),
    set(sequence(objectId("2.5.4.3"), utf8String(commonName))),
  );

const extension = (oid: string, critical: boolean, value: Buffer): Buffer =>
  sequence(objectId(oid), ...(critical ? [boolean(true)] : []), octetString(value));

/** RFC 5280's other method: any stable digest of the key; 20 bytes of its SHA-256. */
const keyIdentifier = (publicKey: KeyObject): Buffer =>
  createHash("sha256")
    .update(publicKey.export({ type: "spki", format: "der" }))
    .digest()
    .subarray(0, 20);

/**
 * keyUsage bits: digitalSignature (0), for a CA keyCertSign (5) and cRLSign (6), and for an RSA key keyEncipherment
 * (2), which KurrentDB requires of a node's certificate (RSA only) besides digitalSignature.
 */
function keyUsage(ca: boolean, publicKey: KeyObject): Buffer {
  if (ca) return tlv(0x03, Buffer.from([1, 0x86]));
  return tlv(0x03, publicKey.asymmetricKeyType === "rsa" ? Buffer.from([5, 0xa0]) : Buffer.from([7, 0x80]));
}

/** A SAN entry: an iPAddress for an address, a dNSName otherwise. */
function generalName(host: string): Buffer {
  const family = isIP(host);
  if (family === 4) return implicit(7, Buffer.from(host.split(".").map(Number)));
  if (family === 6) return implicit(7, ipv6Bytes(host));
  return implicit(2, Buffer.from(host, "ascii"));
}

function ipv6Bytes(address: string): Buffer {
  let text = address;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4?.[1] !== undefined) {
    const [a = 0, b = 0, c = 0, d = 0] = v4[1].split(".").map(Number);
    text = `${text.slice(0, -v4[1].length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const words = (part: string): number[] => (part === "" ? [] : part.split(":").map((w) => parseInt(w, 16)));
  const front = words(head);
  const back = tail === undefined ? [] : words(tail);
  const all = [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
  const out = Buffer.alloc(16);
  all.forEach((w, i) => out.writeUInt16BE(w, i * 2));
  return out;
}

/** An X.509 v3 certificate (ECDSA with SHA-256), in PEM. */
export function issueCertificate(request: CertificateRequest): string {
  const issuerName = request.issuer?.commonName ?? request.commonName;
  const signingKey = request.issuer?.privateKey ?? request.privateKey;
  if (signingKey === undefined) throw new Error("a self-signed certificate needs its private key");
  const serial = randomBytes(16);
  serial[0] = (serial[0] ?? 0) & 0x7f;
  const names = request.names ?? [];
  const extensions = [
    extension("2.5.29.19", true, request.ca ? sequence(boolean(true), smallInteger(0)) : sequence()),
    extension("2.5.29.15", true, keyUsage(request.ca, request.publicKey)),
    extension("2.5.29.14", false, octetString(keyIdentifier(request.publicKey))),
    ...(request.issuer
      ? [extension("2.5.29.35", false, sequence(implicit(0, keyIdentifier(request.issuer.publicKey))))]
      : []),
    ...(request.ca
      ? []
      : [
          extension(
            "2.5.29.37",
            false,
            sequence(...(request.usages ?? ["server"]).map((usage) => objectId(USAGE_OIDS[usage]))),
          ),
          // RFC 5280 allows no empty subjectAltName: a client certificate for no host has none.
          ...(names.length === 0 ? [] : [extension("2.5.29.17", false, sequence(...names.map(generalName)))]),
        ]),
  ];
  const tbs = sequence(
    explicit(0, smallInteger(2)),
    unsignedInteger(serial),
    ECDSA_WITH_SHA256,
    name(issuerName),
    sequence(time(request.notBefore), time(request.notAfter)),
    name(request.commonName),
    request.publicKey.export({ type: "spki", format: "der" }),
    explicit(3, sequence(...extensions)),
  );
  const signature = sign("sha256", tbs, signingKey);
  const der = sequence(tbs, ECDSA_WITH_SHA256, tlv(0x03, Buffer.concat([Buffer.from([0]), signature])));
  const lines = der.toString("base64").match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join("\n")}\n-----END CERTIFICATE-----\n`;
}
