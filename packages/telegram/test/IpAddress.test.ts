import { assert, describe, it } from "vitest"
import { IpAddress } from "../src/index.js"

/** What a URL's host is, after the WHATWG URL parser normalised it. */
const kindOfUrl = (url: string) => {
  const address = IpAddress.ofUrlHost(new URL(url).hostname)
  return address === undefined ? "name" : IpAddress.kind(address)
}

describe("IpAddress", () => {
  it("classifies IPv4 ranges", () => {
    const cases: ReadonlyArray<readonly [string, IpAddress.Kind]> = [
      ["0.0.0.0", "unspecified"],
      ["0.1.2.3", "unspecified"],
      ["127.0.0.1", "loopback"],
      ["127.255.255.254", "loopback"],
      ["10.0.0.1", "private"],
      ["172.16.0.1", "private"],
      ["172.31.255.255", "private"],
      ["192.168.1.1", "private"],
      ["169.254.169.254", "link-local"],
      ["100.64.0.1", "shared"],
      ["100.127.255.255", "shared"],
      ["224.0.0.1", "multicast"],
      ["239.255.255.250", "multicast"],
      ["255.255.255.255", "reserved"],
      ["240.0.0.1", "reserved"],
      ["192.0.2.1", "reserved"],
      ["198.18.0.1", "reserved"],
      ["203.0.113.9", "reserved"],
      ["8.8.8.8", "public"],
      ["1.1.1.1", "public"],
      ["172.15.255.255", "public"],
      ["172.32.0.0", "public"],
      ["100.63.255.255", "public"],
      ["100.128.0.0", "public"],
      ["149.154.167.220", "public"]
    ]
    for (const [address, kind] of cases) assert.strictEqual(IpAddress.kind(address), kind, address)
  })

  it("classifies IPv6 ranges, compressed or not, and the IPv4 addresses carried in IPv6 forms", () => {
    const cases: ReadonlyArray<readonly [string, IpAddress.Kind]> = [
      ["::", "unspecified"],
      ["0:0:0:0:0:0:0:0", "unspecified"],
      ["::1", "loopback"],
      ["0000:0000:0000:0000:0000:0000:0000:0001", "loopback"],
      ["[::1]", "loopback"],
      ["::ffff:127.0.0.1", "loopback"],
      ["::ffff:7f00:1", "loopback"],
      ["::FFFF:7F00:0001", "loopback"],
      ["::ffff:10.1.2.3", "private"],
      ["::ffff:a9fe:a9fe", "link-local"],
      ["::ffff:0:127.0.0.1", "loopback"],
      ["::ffff:8.8.8.8", "public"],
      ["::127.0.0.1", "reserved"],
      ["64:ff9b::7f00:1", "loopback"],
      ["64:ff9b::808:808", "public"],
      ["2002:7f00:1::", "loopback"],
      ["2002:c0a8:101::1", "private"],
      ["fc00::1", "private"],
      ["fd12:3456:789a::1", "private"],
      ["fec0::1", "private"],
      ["fe80::1", "link-local"],
      ["fe80::1%eth0", "link-local"],
      ["febf:ffff::1", "link-local"],
      ["ff02::1", "multicast"],
      ["2001:db8::1", "reserved"],
      ["2001::1", "reserved"],
      ["100::1", "reserved"],
      ["::2", "reserved"],
      ["2001:4860:4860::8888", "public"],
      ["2a00:1450:4001:82a::200e", "public"],
      ["2001:67c:4e8:f004::9", "public"]
    ]
    for (const [address, kind] of cases) assert.strictEqual(IpAddress.kind(address), kind, address)
  })

  it("refuses to read what is not an IP address", () => {
    for (
      const text of [
        "",
        "localhost",
        "example.com",
        "1.2.3",
        "1.2.3.4.5",
        "256.0.0.1",
        "01.2.3.4",
        "0x7f.0.0.1",
        "1:2:3:4:5:6:7:8:9",
        "1::2::3",
        ":::",
        "12345::",
        "::ffff:1.2.3"
      ]
    ) {
      assert.isUndefined(IpAddress.kind(text), text)
      assert.isFalse(IpAddress.isPublic(text), text)
    }
  })

  it("reads URL hosts after the URL parser normalised decimal, hexadecimal, octal and short forms", () => {
    const cases: ReadonlyArray<readonly [string, ReturnType<typeof kindOfUrl>]> = [
      ["http://127.0.0.1:8080/hook", "loopback"],
      ["http://2130706433/", "loopback"],
      ["http://0x7f000001/", "loopback"],
      ["http://0x7f.0x0.0x0.0x1/", "loopback"],
      ["http://0177.0.0.1/", "loopback"],
      ["http://017700000001/", "loopback"],
      ["http://127.1/", "loopback"],
      ["http://0/", "unspecified"],
      ["http://[::1]/", "loopback"],
      ["http://[0:0:0:0:0:0:0:1]/", "loopback"],
      ["http://[::ffff:127.0.0.1]/", "loopback"],
      ["http://[::ffff:169.254.169.254]/", "link-local"],
      ["http://[::]/", "unspecified"],
      ["http://[fd00::5]/", "private"],
      ["http://169.254.169.254/latest/meta-data/", "link-local"],
      ["http://0xa9fea9fe/", "link-local"],
      ["http://user:pass@10.0.0.1/", "private"],
      ["https://8.8.8.8/", "public"],
      ["https://example.com/", "name"],
      ["http://localhost:8080/", "name"]
    ]
    for (const [url, kind] of cases) assert.strictEqual(kindOfUrl(url), kind, url)
  })

  it("spells equal addresses alike and knows localhost names", () => {
    assert.strictEqual(IpAddress.canonical("::ffff:7f00:1"), "127.0.0.1")
    assert.strictEqual(IpAddress.canonical("2001:DB8:0:0::1"), "2001:db8:0:0:0:0:0:1")
    assert.strictEqual(IpAddress.canonical("fe80::1%lo"), "fe80:0:0:0:0:0:0:1")
    assert.isUndefined(IpAddress.canonical("example.com"))
    assert.isTrue(IpAddress.isLocalhostName("localhost"))
    assert.isTrue(IpAddress.isLocalhostName("LOCALHOST."))
    assert.isTrue(IpAddress.isLocalhostName("api.localhost"))
    assert.isFalse(IpAddress.isLocalhostName("localhost.example.com"))
  })
})
