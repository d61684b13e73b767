import { describe, expect, it } from "vitest";
import { redactCredentialsIn, redactUrl } from "../../../src/security/redact-url.ts";

describe("redactUrl", () => {
  it("drops user:password, a lone user or token, and keeps the rest", () => {
    expect(redactUrl("esdb://admin:changeit@db.example:2113?tls=true")).toBe("esdb://db.example:2113?tls=true");
    expect(redactUrl("nats://user:pw@127.0.0.1:4222")).toBe("nats://127.0.0.1:4222");
    expect(redactUrl("nats://s3cr3t-token@nats.example:4222")).toBe("nats://nats.example:4222");
    expect(redactUrl("user:pw@127.0.0.1:4222")).toBe("127.0.0.1:4222");
  });

  it("leaves a URL without credentials as it is", () => {
    for (const url of ["nats://127.0.0.1:4222", "esdb://localhost:2113?tls=false", "127.0.0.1:4222", "", "not a url"]) {
      expect(redactUrl(url)).toBe(url);
    }
  });

  it("drops passwords with unescaped / , ? # @ and every password of a list", () => {
    expect(redactUrl("esdb://u:pa/ss,w?o#r@d@db:2113")).toBe("esdb://db:2113");
    expect(redactUrl("esdb+discover://u:p1@h1:2113,h2:2113")).toBe("esdb+discover://h1:2113,h2:2113");
    expect(redactUrl("nats://a:p1@h1:4222,nats://c:p2@h2:4222")).toBe("nats://h1:4222,nats://h2:4222");
  });

  it("takes a URL's credentials out of a message that quotes it, or its password, written or decoded", () => {
    const url = "kurrentdb://admin:pa%2Fss-word@h1:2113,h2:2113?tls=true";
    expect(redactCredentialsIn(`cannot parse ${url}`, url)).toBe("cannot parse kurrentdb://h1:2113,h2:2113?tls=true");
    expect(redactCredentialsIn("login pa/ss-word refused, pa%2Fss-word too", url)).toBe("login *** refused, *** too");
    expect(redactCredentialsIn("nothing secret here", "kurrentdb://h1:2113?tls=true")).toBe("nothing secret here");
  });
});
