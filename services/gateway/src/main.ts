/** Entry of the gateway service alone: `node services/gateway/dist/main.js`. */
void import('./run.js').then(({ run }) => run());
