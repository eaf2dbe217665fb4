import { canonicalJson, sha256Hex } from '../codec/index.ts';
import type {
  ApprovalPolicy,
  GuestToolBinding,
  JsonSchema,
  RevisedCallPolicy,
  ToolApproval,
  ToolBudget,
  ToolCost,
  ToolEffect,
} from '../spec/index.ts';

export interface ManifestTools {
  readonly bindings: readonly GuestToolBinding[];
  get(
    namespace: string,
    name: string,
  ):
    | {
        readonly effect: ToolEffect;
        readonly inputSchema?: JsonSchema;
        readonly outputSchema?: JsonSchema;
        readonly requiresApproval?: ApprovalPolicy;
        readonly approval?: ToolApproval;
        readonly revisedCall?: RevisedCallPolicy;
        /** Not part of the manifest: a changed budget or cost does not change what the guest relies on. */
        readonly budget?: ToolBudget;
        readonly cost?: ToolCost;
      }
    | undefined;
}

/** A hash of what the guest can see and rely on: every tool's place, schemas and effect. */
export function toolManifestHash(tools: ManifestTools): string {
  const entries = tools.bindings
    .map((b) => {
      const def = tools.get(b.namespace, b.name);
      return {
        tool: `${b.namespace}.${b.name}`,
        effect: def?.effect ?? null,
        input: def?.inputSchema ?? null,
        output: def?.outputSchema ?? null,
      };
    })
    .sort((a, b) => (a.tool < b.tool ? -1 : a.tool > b.tool ? 1 : 0));
  return sha256Hex(canonicalJson(entries));
}
