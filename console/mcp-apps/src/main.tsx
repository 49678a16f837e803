/**
 * Entry of the MCP App views (`console/mcp-apps/build.ts` inlines it into each view's HTML): connects to the host,
 * takes the tool call's input and result from it, and renders the view the page is (`<body data-view>`).
 */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { app, applyHostContext, resultText } from './host.js';
import { ServiceView } from './service.js';
import { WorkflowView } from './workflow.js';

const view = document.body.dataset.view === 'service' ? ServiceView : WorkflowView;

function Root() {
  const [input, setInput] = useState<Record<string, unknown>>();
  const [result, setResult] = useState<Record<string, unknown>>();
  const [failure, setFailure] = useState<string>();
  useEffect(() => {
    // Handlers first: the host sends the tool input as soon as the handshake is done.
    app.ontoolinput = (params) => setInput(params.arguments ?? {});
    app.ontoolresult = (params) => {
      if (params.isError) setFailure(resultText(params) || 'the tool call failed');
      else setResult((params.structuredContent as Record<string, unknown> | undefined) ?? JSON.parse(resultText(params) || '{}'));
    };
    app.ontoolcancelled = (params) => setFailure(`The tool call was cancelled${params.reason ? `: ${params.reason}` : ''}.`);
    app.onhostcontextchanged = (context) => applyHostContext(context);
    app.onteardown = async () => ({});
    app.connect().then(
      () => applyHostContext(app.getHostContext()),
      (err: Error) => setFailure(`Could not reach the host: ${err.message}`),
    );
  }, []);
  const View = view;
  return (
    <main>
      <View input={input} result={result} failure={failure} />
    </main>
  );
}

render(<Root />, document.getElementById('root')!);
