import { describe, expect, it } from "vitest";
import { isWildcardHost, reachableHost, urlHost } from "../../../src/net/reachable-host.ts";

describe("where this machine reaches a server from the host it listens on", () => {
  it("counts 0.0.0.0, ::, [::], their longer spellings and empty as every interface", () => {
    for (const host of ["0.0.0.0", "::", "[::]", "0:0:0:0:0:0:0:0", "::0", " 0.0.0.0 ", ""]) {
      expect(isWildcardHost(host), host).toBe(true);
    }
    for (const host of ["127.0.0.1", "::1", "[::1]", "10.0.0.0", "box", "0.0.0.1", "fe80::"]) {
      expect(isWildcardHost(host), host).toBe(false);
    }
  });

  it("reaches a wildcard listener, IPv4 or IPv6, on 127.0.0.1 and any other host as given, without brackets", () => {
    expect(reachableHost("0.0.0.0")).toBe("127.0.0.1");
    expect(reachableHost("::")).toBe("127.0.0.1");
    expect(reachableHost("[::]")).toBe("127.0.0.1");
    expect(reachableHost("")).toBe("127.0.0.1");
    expect(reachableHost("10.1.2.3")).toBe("10.1.2.3");
    expect(reachableHost("[::1]")).toBe("::1");
    expect(reachableHost("box.example")).toBe("box.example");
  });

  it("brackets an IPv6 address in a URL, once, and leaves names and IPv4 addresses alone", () => {
    expect(urlHost("::1")).toBe("[::1]");
    expect(urlHost("[::1]")).toBe("[::1]");
    expect(urlHost("fe80::1")).toBe("[fe80::1]");
    expect(urlHost("127.0.0.1")).toBe("127.0.0.1");
    expect(urlHost("box")).toBe("box");
    expect(`http://${urlHost(reachableHost("::"))}:80`).toBe("http://127.0.0.1:80");
  });
});
