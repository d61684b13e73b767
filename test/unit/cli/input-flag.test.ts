import { describe, expect, it } from "vitest";
import { inputFlag } from "../../../src/cli/input-flag.ts";
import { UsageError } from "../../../src/cli/usage-error.ts";

const HELP = "shoal docker run --help";
const read = (text: string) => inputFlag(text, HELP);
const local = (SourcePath: string, ReadWrite = false) => ({
  Type: "localDirectory",
  Params: { SourcePath, ReadWrite },
});
const refusal = (text: string): string => {
  try {
    read(text);
  } catch (e) {
    expect(e).toBeInstanceOf(UsageError);
    return (e as Error).message;
  }
  throw new Error(`${text} was accepted`);
};

describe("inputFlag (Bacalhau's -i/--input)", () => {
  it("reads the short form, a destination split off only before an absolute path", () => {
    expect(read("file:///data")).toEqual({ Source: local("/data"), Alias: "file:///data", Target: "/inputs" });
    expect(read("file:///data:/in")).toMatchObject({ Source: local("/data"), Target: "/in" });
    expect(read("file:/data")).toMatchObject({ Source: local("/data"), Target: "/inputs" });
    expect(read("http://h:8080/f.txt")).toMatchObject({
      Source: { Type: "urlDownload", Params: { URL: "http://h:8080/f.txt" } },
      Target: "/inputs",
    });
    expect(read("HTTPS://h/f.txt:/x/f")).toMatchObject({
      Source: { Params: { URL: "HTTPS://h/f.txt" } },
      Target: "/x/f",
    });
  });

  it("reads keys in any case, options, Go's booleans and CSV quoting; paths as Go's filepath.Join cleans them", () => {
    expect(read("SRC=file:///a/b/../c/,Dst=/c,opt=rw=T")).toEqual({
      Source: local("/a/c", true),
      Alias: "file:///a/b/../c/",
      Target: "/c",
    });
    expect(read("source=file:///a,destination=/b,option=read-write=0")).toMatchObject({ Source: local("/a") });
    expect(read('"src=http://h/a,b.txt",dst=/x')).toMatchObject({ Source: { Params: { URL: "http://h/a,b.txt" } } });
    expect(read("src='file:///q',dst='/t'")).toMatchObject({ Source: local("/q"), Target: "/t" });
  });

  it("refuses what Shoal cannot mount, and malformed flags, naming the problem", () => {
    expect(refusal("ipfs://QmCid")).toContain('storage "ipfs://" is not supported: Shoal reads file://');
    expect(refusal("s3://bucket/key,dst=/x")).toContain('storage "s3://" is not supported');
    expect(refusal("/data")).toContain("the source has no scheme");
    expect(refusal("file://data/x")).toContain('the source path "data/x" must be an absolute path');
    expect(refusal("file:///a,rw")).toContain('invalid storage option "rw": must be a key=value pair');
    expect(refusal("src=file:///a,mode=ro")).toContain('unexpected key "mode": use src, dst or opt');
    expect(refusal("src=file:///a,opt=ro=true")).toContain('unknown option "ro" for file:// (it takes rw)');
    expect(refusal("src=http://h/f,opt=region=x")).toContain('unknown option "region" for http://');
    expect(refusal("src=file:///a,opt=rw=yes")).toContain('opt=rw takes true or false, got "yes"');
    expect(refusal("src=file:///a,dst=/")).toContain('the destination "/" cannot be / (the container\'s root)');
    expect(refusal("dst=/x")).toContain("no source URI");
    expect(refusal("http://h/")).toContain("URL must end with a file name");
  });
});
