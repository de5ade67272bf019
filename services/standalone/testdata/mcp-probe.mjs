// A probe with the official TypeScript MCP SDK, which validates tool
// schemas and results with a draft-07 validator: node mcp-probe.mjs URL KEY CRED.
// It prints one JSON line of what it saw, or exits non-zero with the error.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, key, cred] = process.argv.slice(2);
const client = new Client({ name: "perpgate-ts-probe", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${key}` } },
}));
const call = async (name, args) => {
  const res = await client.callTool({ name, arguments: { credentialId: cred, ...args } });
  if (res.isError) throw new Error(`${name}: ${res.content[0].text}`);
  return res.structuredContent;
};
const { tools } = await client.listTools();
const book = await call("get_orderbook", { market: "BTC", depth: 5 });
const dry = await call("place_limit_order", { market: "BTC", side: "BUY", size: "0.01", price: "50000", dryRun: true });
const prot = await call("place_protection_orders", { market: "BTC", side: "LONG", size: "0.01", entryPrice: "60000", tpPercent: 5, slPercent: 2.5, dryRun: true });
console.log(JSON.stringify({ tools: tools.length, bids: book.bids.length, dryRun: dry.dryRun, takeProfit: prot.takeProfit.triggerPrice }));
await client.close();
