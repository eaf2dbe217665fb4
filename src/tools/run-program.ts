import type {
  ExecutionLimits,
  ExecutionResult,
  GuestLanguage,
  Egress,
  LogEntry,
  NetworkAccess,
  SandboxPolicy,
  SandboxDriver,
  ToolDefinition,
  WorkspaceFile,
} from '../spec/index.ts';
import { EGRESS_BINDINGS, egressHost, MAX_TOOL_LOG_LINES, withToolLines } from '../spec/index.ts';
import { fileBodies } from './file-bodies.ts';
import type { RunBodies } from './file-bodies.ts';
import { ToolRegistry } from './tool-host.ts';

export interface RunProgramOptions {
  driver: SandboxDriver;
  code: string;
  language?: GuestLanguage;
  filename?: string;
  tools?: readonly ToolDefinition[] | ToolRegistry;
  limits?: Partial<ExecutionLimits>;
  /** What the program may import and start (drivers apply what they can). */
  policy?: SandboxPolicy;
  /** Placed in the working directory (drivers with a file system). */
  files?: readonly WorkspaceFile[];
  seed?: number;
  clock?: () => number;
  signal?: AbortSignal;
  onLog?: (entry: LogEntry) => void;
  /** The program's `fetch` goes out through `egress` to where `access` allows (issue 21); absent: nowhere. */
  network?: {
    egress: Egress;
    access: NetworkAccess;
    maxRequests?: number;
    /** Where large bodies go for the run (default: a directory of the OS's temporary one), deleted at its end. */
    bodiesDir?: string;
  };
}

// Registries are reused for the same tools array, so repeated runs do not re-check the tools.
const registries = new WeakMap<readonly ToolDefinition[], ToolRegistry>();
const NO_TOOLS: readonly ToolDefinition[] = [];

function registryFor(tools: readonly ToolDefinition[] | ToolRegistry | undefined): ToolRegistry {
  if (tools instanceof ToolRegistry) return tools;
  const list = tools ?? NO_TOOLS;
  let registry = registries.get(list);
  if (!registry || registry.size !== list.length) {
    registry = new ToolRegistry(list);
    registries.set(list, registry);
  }
  return registry;
}

/** Runs one program in a sandbox with the given tools served on the host. */
export async function runProgram(options: RunProgramOptions): Promise<ExecutionResult> {
  const registry = registryFor(options.tools);
  // What tools log (`ctx.log`) goes live to onLog and, after the program's own lines, into the result's logs.
  const toolLines: LogEntry[] = [];
  const host = registry.host({
    ...(options.onLog ? { onLog: options.onLog } : {}),
    onToolLog: (entry) => {
      if (toolLines.length < MAX_TOOL_LOG_LINES) toolLines.push(entry);
      options.onLog?.(entry);
    },
  });
  const { network } = options;
  // Large bodies streamed to files for the run, bounded (ADR 0046): nothing replays a one-off run.
  const bodies = network
    ? fileBodies(network.bodiesDir === undefined ? {} : { parent: network.bodiesDir })
    : undefined;
  try {
    return withToolLines(await execute(options, registry, host, bodies), toolLines);
  } finally {
    await bodies?.close();
  }
}

function execute(
  options: RunProgramOptions,
  registry: ToolRegistry,
  host: ReturnType<ToolRegistry['host']>,
  bodies: RunBodies | undefined,
): Promise<ExecutionResult> {
  const { network } = options;
  return options.driver.execute(
    {
      code: options.code,
      language: options.language ?? 'javascript',
      tools: network ? [...registry.bindings, ...EGRESS_BINDINGS] : registry.bindings,
      host: network
        ? egressHost(host, {
            egress: network.egress,
            access: network.access,
            maxRequests: network.maxRequests,
            ...(bodies ? { bodies } : {}),
          })
        : host,
      ...(options.filename === undefined ? {} : { filename: options.filename }),
      ...(options.limits === undefined ? {} : { limits: options.limits }),
      ...(options.seed === undefined ? {} : { seed: options.seed }),
      ...(options.policy === undefined ? {} : { policy: options.policy }),
      ...(options.files === undefined ? {} : { files: options.files }),
      ...(options.clock === undefined ? {} : { clock: options.clock }),
    },
    options.signal ? { signal: options.signal } : {},
  );
}
