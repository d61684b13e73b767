import { describe, expect, it } from "vitest";
import { inputFlag } from "../../../src/cli/input-flag.ts";
import { UsageError } from "../../../src/cli/usage-error.ts";

const HELP = "shoal docker run --help";
const read = (text: string) => inputFlag(text, HELP);
const local = (SourcePath: string, ReadWrite = false) => ({
  Type: "localDirectory",
  Params: { SourcePath, ReadWrite },
});

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
    expect(() => read("ipfs://QmCid")).toThrowError(UsageError);
    expect(() => read("ipfs://QmCid")).toThrowError('storage "ipfs://" is not supported: Shoal reads file://');
    expect(() => read("s3://bucket/key,dst=/x")).toThrowError('storage "s3://" is not supported');
    expect(() => read("/data")).toThrowError("the source has no scheme");
    expect(() => read("file://data/x")).toThrowError('the source path "data/x" must be an absolute path');
    expect(() => read("file:///a,rw")).toThrowError('invalid storage option "rw": must be a key=value pair');
    expect(() => read("src=file:///a,mode=ro")).toThrowError('unexpected key "mode": use src, dst or opt');
    expect(() => read("src=file:///a,opt=ro=true")).toThrowError('unknown option "ro" for file:// (it takes rw)');
    expect(() => read("src=http://h/f,opt=region=x")).toThrowError('unknown option "region" for http://');
    expect(() => read("src=file:///a,opt=rw=yes")).toThrowError('opt=rw takes true or false, got "yes"');
    expect(() => read("src=file:///a,dst=/")).toThrowError('the destination "/" cannot be / (the container\'s root)');
    expect(() => read("dst=/x")).toThrowError("no source URI");
    expect(() => read("http://h/")).toThrowError("URL must end with a file name");
  });
});
