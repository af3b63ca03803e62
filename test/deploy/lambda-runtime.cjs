// A stand-in for the Lambda Node.js runtime, for the deploy rehearsal: run by the Node.js of the
// runtime's major version (test/deploy/lambda-node), CommonJS, the bundle loaded from its cdk.out
// directory as Lambda loads it (`index.handler`), an AWS SDK outside the bundle on NODE_PATH as
// the runtime provides one (the project's functions bundle their own; CDK's deploy-time function uses it). One process per function, kept warm
// between invocations like a container; events arrive over IPC.
const https = require('node:https');
const { EventEmitter } = require('node:events');
const { join } = require('node:path');

const [, , bundleDir, handlerName] = process.argv;
const [file, exported] = handlerName.split('.');

// CloudFormation's custom-resource response goes to a pre-signed S3 URL over HTTPS; here the
// rehearsal plays CloudFormation, so a PUT to its host is handed back over IPC instead.
const RESPONSE_HOST = process.env.REHEARSAL_CFN_RESPONSE_HOST;
const realRequest = https.request;
https.request = (options, callback) => {
  if (!RESPONSE_HOST || options.hostname !== RESPONSE_HOST) return realRequest(options, callback);
  const fake = new EventEmitter();
  let body = '';
  fake.write = (chunk) => {
    body += chunk;
    return true;
  };
  fake.end = () => {
    process.send({ type: 'cfn-response', body });
    const response = new EventEmitter();
    response.statusCode = 200;
    if (callback) callback(response);
    setImmediate(() => response.emit('end'));
  };
  return fake;
};

const handler = require(join(bundleDir, file))[exported];
if (typeof handler !== 'function') throw new Error(`${handlerName} is not a function in ${bundleDir}`);

// One invocation at a time, as in a Lambda execution environment: what a handler keeps at module
// scope between invocations (metrics and their dimensions, caches) is never shared by two at once.
let queue = Promise.resolve();
process.on('message', ({ id, event, timeoutMs }) => {
  queue = queue.then(() => invoke(id, event, timeoutMs));
});

async function invoke(id, event, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  const context = {
    functionName: process.env.AWS_LAMBDA_FUNCTION_NAME,
    functionVersion: '$LATEST',
    invokedFunctionArn: process.env.REHEARSAL_FUNCTION_ARN,
    memoryLimitInMB: process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE,
    awsRequestId: `rehearsal-${id}`,
    logGroupName: process.env.AWS_LAMBDA_LOG_GROUP_NAME,
    logStreamName: 'rehearsal',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    callbackWaitsForEmptyEventLoop: true,
  };
  try {
    const result = await handler(event, context);
    process.send({ type: 'result', id, result: result === undefined ? null : result });
  } catch (error) {
    process.send({ type: 'result', id, error: { name: error?.name, message: error?.message } });
  }
}
process.send({ type: 'ready', execArgv: process.execArgv, version: process.version });
