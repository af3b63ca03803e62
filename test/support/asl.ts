/**
 * A small interpreter of the Amazon States Language, for the states the accounts' state machine
 * uses (Pass, Task, Map inline, Succeed, Fail; JSONPath paths, Parameters, ResultSelector,
 * ResultPath, OutputPath, Retry, Catch, MaxConcurrency). No Step Functions Local runs here, so the
 * tests run the synthesized definition with this instead: whatever it does not know it refuses,
 * loudly, rather than guess. Retries do not wait; they are recorded. It also writes the execution's
 * history as Step Functions counts its events, to check the 25 000-event limit against.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A state of the definition, as much of it as this interpreter reads. */
interface State {
  readonly Type: string;
  readonly Next?: string;
  readonly End?: boolean;
  readonly Result?: Json;
  readonly Parameters?: Json;
  readonly ItemSelector?: Json;
  readonly ResultSelector?: Json;
  readonly InputPath?: string | null;
  readonly ResultPath?: string | null;
  readonly OutputPath?: string | null;
  readonly Resource?: string;
  readonly ItemsPath?: string;
  readonly MaxConcurrency?: number;
  readonly ItemProcessor?: Machine & { readonly ProcessorConfig?: { readonly Mode?: string } };
  readonly Iterator?: Machine;
  readonly Retry?: ReadonlyArray<{
    readonly ErrorEquals: readonly string[];
    readonly MaxAttempts?: number;
    readonly IntervalSeconds?: number;
    readonly BackoffRate?: number;
  }>;
  readonly Catch?: ReadonlyArray<{
    readonly ErrorEquals: readonly string[];
    readonly ResultPath?: string | null;
    readonly Next: string;
  }>;
  readonly Error?: string;
  readonly Cause?: string;
  readonly [other: string]: unknown;
}

export interface Machine {
  readonly StartAt: string;
  readonly States: Readonly<Record<string, State>>;
}

/** A task's failure, as Step Functions names it (a Lambda error's name is its `errorType`). */
export class TaskFailedError extends Error {
  constructor(
    readonly error: string,
    readonly errorCause: string,
  ) {
    super(`${error}: ${errorCause}`);
  }
  override readonly name = 'TaskFailedError';
}

export interface TaskHandlers {
  /** `arn:…:states:::lambda:invoke`: the function's result (thrown errors become its failure). */
  readonly lambda: (functionName: string, payload: Json) => Promise<Json>;
  /** `arn:…:states:::aws-sdk:<service>:<action>`. */
  readonly sdk: (service: string, action: string, parameters: Json) => Promise<Json>;
}

export interface Execution {
  readonly output: Json;
  /** Event types in order, as the execution's history would hold them. */
  readonly history: string[];
  /** Retries taken: state name and the interval it would have waited. */
  readonly retries: Array<{ state: string; error: string; intervalSeconds: number }>;
  /** The most Map iterations that ran at once. */
  readonly mostInFlight: number;
}

const KNOWN_FIELDS = new Set([
  'Type',
  'Next',
  'End',
  'Comment',
  'Result',
  'Parameters',
  'ItemSelector',
  'ResultSelector',
  'InputPath',
  'ResultPath',
  'OutputPath',
  'Resource',
  'ItemsPath',
  'MaxConcurrency',
  'ItemProcessor',
  'Retry',
  'Catch',
  'TimeoutSeconds',
  'Error',
  'Cause',
]);

/** `$`, `$.a.b`, `$.a[0]`: the paths the definition uses. */
export function readPath(value: Json, path: string): Json {
  if (path === '$') return value;
  if (!path.startsWith('$.')) throw new Error(`unsupported path ${path}`);
  let current: Json = value;
  for (const part of path.slice(2).split('.')) {
    const match = /^([A-Za-z0-9_-]+)(?:\[(\d+)\])?$/.exec(part);
    if (!match?.[1]) throw new Error(`unsupported path ${path}`);
    if (current === null || typeof current !== 'object' || Array.isArray(current) || !(match[1] in current))
      throw new TaskFailedError('States.Runtime', `the path ${path} names nothing in the input`);
    current = (current as Record<string, Json>)[match[1]] as Json;
    if (match[2] !== undefined) current = (current as Json[])[Number(match[2])] as Json;
  }
  return current;
}

/** Parameters, ItemSelector, ResultSelector: `key.$` takes the value at a path of `input`. */
export function applyTemplate(template: Json, input: Json): Json {
  if (Array.isArray(template)) return template.map((t) => applyTemplate(t, input));
  if (template === null || typeof template !== 'object') return template;
  const out: Record<string, Json> = {};
  for (const [key, value] of Object.entries(template)) {
    if (key.endsWith('.$')) {
      if (typeof value !== 'string' || !value.startsWith('$'))
        throw new Error(
          `unsupported ${key}: ${JSON.stringify(value)} (intrinsic functions are not interpreted)`,
        );
      out[key.slice(0, -2)] = readPath(input, value);
    } else out[key] = applyTemplate(value, input);
  }
  return out;
}

function writePath(input: Json, path: string | null | undefined, result: Json): Json {
  if (path === null) return input;
  if (path === undefined || path === '$') return result;
  if (!path.startsWith('$.') || path.slice(2).includes('.'))
    throw new Error(`unsupported ResultPath ${path}`);
  if (input === null || typeof input !== 'object' || Array.isArray(input))
    throw new TaskFailedError('States.Runtime', `cannot set ${path} on a non-object input`);
  return { ...input, [path.slice(2)]: result };
}

const matches = (errors: readonly string[], error: string) =>
  errors.includes(error) ||
  errors.includes('States.ALL') ||
  (errors.includes('States.TaskFailed') && error !== 'States.Timeout');

/** Runs `machine` on `input` with the tasks' handlers; resolves with the output or throws the execution's failure. */
export async function runStateMachine(
  machine: Machine,
  input: Json,
  handlers: TaskHandlers,
): Promise<Execution> {
  const history: string[] = ['ExecutionStarted'];
  const retries: Execution['retries'] = [];
  let inFlight = 0;
  let mostInFlight = 0;

  const runTask = async (name: string, state: State, effective: Json): Promise<Json> => {
    const resource = state.Resource ?? '';
    const parameters =
      state.Parameters === undefined ? effective : applyTemplate(state.Parameters, effective);
    const lambda = /^arn:[a-z-]+:states:::lambda:invoke$/.exec(resource);
    const sdk = /^arn:[a-z-]+:states:::aws-sdk:([a-z0-9]+):([A-Za-z0-9]+)$/.exec(resource);
    if (lambda) {
      const { FunctionName, Payload } = parameters as { FunctionName: string; Payload: Json };
      return {
        ExecutedVersion: '$LATEST',
        Payload: await handlers.lambda(FunctionName, Payload),
        StatusCode: 200,
      };
    }
    if (sdk?.[1] && sdk[2]) return handlers.sdk(sdk[1], sdk[2], parameters);
    throw new Error(`${name}: unsupported resource ${resource}`);
  };

  const run = async (sub: Machine, start: Json): Promise<Json> => {
    let name = sub.StartAt;
    let value = start;
    for (;;) {
      const state = sub.States[name];
      if (!state) throw new Error(`no state ${name}`);
      for (const field of Object.keys(state))
        if (!KNOWN_FIELDS.has(field)) throw new Error(`${name}: field ${field} is not interpreted`);
      const effective = state.InputPath ? readPath(value, state.InputPath) : value;
      let next: string | undefined = state.Next;
      // A caught failure goes on with the catcher's ResultPath only: no OutputPath of the state.
      let caught = false;
      history.push(`${state.Type}StateEntered`);
      switch (state.Type) {
        case 'Pass': {
          const result =
            state.Result !== undefined
              ? state.Result
              : state.Parameters !== undefined
                ? applyTemplate(state.Parameters, effective)
                : effective;
          value = writePath(value, state.ResultPath, result);
          break;
        }
        case 'Task': {
          let result: Json | undefined;
          let failure: TaskFailedError | undefined;
          const counts = new Map<number, number>();
          for (;;) {
            history.push('TaskScheduled', 'TaskStarted');
            try {
              result = await runTask(name, state, effective);
              history.push('TaskSucceeded');
              failure = undefined;
              break;
            } catch (error) {
              failure =
                error instanceof TaskFailedError
                  ? error
                  : new TaskFailedError((error as Error).name, (error as Error).message);
              history.push('TaskFailed');
              const index = (state.Retry ?? []).findIndex((r) =>
                matches(r.ErrorEquals, failure?.error ?? ''),
              );
              const retrier = state.Retry?.[index];
              const used = counts.get(index) ?? 0;
              if (!retrier || used >= (retrier.MaxAttempts ?? 3)) break;
              counts.set(index, used + 1);
              retries.push({
                state: name,
                error: failure.error,
                intervalSeconds: (retrier.IntervalSeconds ?? 1) * (retrier.BackoffRate ?? 2) ** used,
              });
            }
          }
          if (failure) {
            const catcher = state.Catch?.find((c) => matches(c.ErrorEquals, failure?.error ?? ''));
            if (!catcher) {
              history.push('ExecutionFailed');
              throw failure;
            }
            value = writePath(value, catcher.ResultPath, { Error: failure.error, Cause: failure.errorCause });
            next = catcher.Next;
            caught = true;
            break;
          }
          const selected = state.ResultSelector
            ? applyTemplate(state.ResultSelector, result as Json)
            : (result as Json);
          value = writePath(value, state.ResultPath, selected);
          break;
        }
        case 'Map': {
          const processor = state.ItemProcessor ?? state.Iterator;
          if (!processor) throw new Error(`${name}: a Map without an ItemProcessor`);
          if ((state.ItemProcessor?.ProcessorConfig?.Mode ?? 'INLINE') !== 'INLINE')
            throw new Error(`${name}: only inline Maps are interpreted`);
          const items = readPath(effective, state.ItemsPath ?? '$');
          if (!Array.isArray(items))
            throw new TaskFailedError('States.Runtime', `${name}: ItemsPath is not an array`);
          history.push('MapStateStarted');
          const limit =
            state.MaxConcurrency && state.MaxConcurrency > 0 ? state.MaxConcurrency : items.length;
          const results: Json[] = new Array(items.length);
          let cursor = 0;
          const worker = async () => {
            for (let i = cursor++; i < items.length; i = cursor++) {
              const item = state.ItemSelector
                ? applyTemplate(state.ItemSelector, { ...(effective as object), item: items[i] } as Json)
                : (items[i] as Json);
              inFlight++;
              mostInFlight = Math.max(mostInFlight, inFlight);
              history.push('MapIterationStarted');
              try {
                results[i] = await run(processor, item);
                history.push('MapIterationSucceeded');
              } finally {
                inFlight--;
              }
            }
          };
          await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
          history.push('MapStateSucceeded');
          value = writePath(value, state.ResultPath, results);
          break;
        }
        case 'Succeed':
          history.push('SucceedStateExited');
          return state.OutputPath ? readPath(value, state.OutputPath) : value;
        case 'Fail':
          history.push('ExecutionFailed');
          throw new TaskFailedError(state.Error ?? 'States.Fail', state.Cause ?? '');
        default:
          throw new Error(`${name}: state type ${state.Type} is not interpreted`);
      }
      if (state.OutputPath && !caught) value = readPath(value, state.OutputPath);
      history.push(`${state.Type}StateExited`);
      if ((state.End && !caught) || next === undefined) return value;
      name = next;
    }
  };

  const output = await run(machine, input);
  history.push('ExecutionSucceeded');
  return { output, history, retries, mostInFlight };
}
