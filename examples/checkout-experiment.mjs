// A measurable app in a few lines (README, "Experiments"): 2,000 simulated users evaluate the `checkout`
// flag through OpenFeature with @flagpost/openfeature, and those who buy are tracked. The treatment
// converts better (12 % against 8 %), so the experiment's results should say it won.
//
//   FLAGPOST_URL=http://localhost:3000 PROJECT_KEY=... ENVIRONMENT_KEY=... node examples/checkout-experiment.mjs
import { OpenFeature } from '@openfeature/server-sdk';
import { FlagpostProvider } from '@flagpost/openfeature';

const { FLAGPOST_URL = 'http://localhost:3000', PROJECT_KEY, ENVIRONMENT_KEY, USERS = '2000', FLAG = 'checkout' } = process.env;
if (!PROJECT_KEY || !ENVIRONMENT_KEY) throw new Error('Set PROJECT_KEY and ENVIRONMENT_KEY (the project and environment keys of the flag interface)');

await OpenFeature.setProviderAndWait(new FlagpostProvider({ baseUrl: FLAGPOST_URL, projectKey: PROJECT_KEY, environmentKey: ENVIRONMENT_KEY }));
const client = OpenFeature.getClient();

// A seeded generator, so that every run buys the same way.
let seed = 42;
const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;

const served = {};
for (let i = 1; i <= Number(USERS); i++) {
  const context = { targetingKey: `user-${i}` };
  const details = await client.getBooleanDetails(FLAG, false, context);
  const variant = details.variant ?? 'none';
  served[variant] = (served[variant] ?? 0) + 1;
  const buys = random() < (details.value ? 0.12 : 0.08);
  if (buys) client.track('purchase', context, { value: 20 + Math.round(random() * 80) });
}
await OpenFeature.close(); // sends what is still queued
console.log(`served: ${JSON.stringify(served)}`);
