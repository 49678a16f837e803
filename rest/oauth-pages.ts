/**
 * The HTML pages of pds's OAuth authorization server (issue 12): choosing where to sign in, the consent page that names
 * the client and the scopes, the device-code pages (`pds login --device`) and the error page. Rendered with mustache,
 * which escapes every value, so a client's self-chosen name cannot inject markup. No scripts, no outside assets.
 */
import Mustache from 'mustache';

const LAYOUT = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{title}} · pds</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#1b1f24}
h1{font-size:1.4rem}button,.button{font:inherit;padding:.5rem 1rem;margin:.25rem .5rem .25rem 0;border-radius:6px;border:1px solid #888;background:#f6f8fa;cursor:pointer;text-decoration:none;color:inherit;display:inline-block}
button.primary,.button.primary{background:#1f6feb;border-color:#1f6feb;color:#fff}code,.code{font-family:ui-monospace,monospace}
li{margin:.25rem 0}.muted{color:#57606a;font-size:.9rem}.error{color:#cf222e}</style></head>
<body>{{> content}}</body></html>`;

const SIGN_IN = `<h1>Sign in to pds</h1>
<p><strong>{{client}}</strong> wants to use pds on your behalf. Sign in with:</p>
<p>{{#upstreams}}<a class="button primary" href="{{href}}">{{title}}</a>{{/upstreams}}</p>
{{^upstreams}}<p class="error">No sign-in method is configured on this pds: the operator sets PDS_AUTH_URL with PDS_OIDC_CLIENT_SECRET (Dex), or PDS_GITHUB_OAUTH_CLIENT_ID and PDS_GITHUB_OAUTH_CLIENT_SECRET (a GitHub OAuth app).</p>{{/upstreams}}
<form method="post" action="{{abort}}"><button type="submit">Cancel</button></form>`;

const CONSENT = `<h1>Allow {{client}}?</h1>
<p>Signed in as <strong>{{user}}</strong>. <strong>{{client}}</strong> (<span class="code">{{clientId}}</span>) asks to:</p>
<ul>{{#scopes}}<li><span class="code">{{name}}</span>: {{description}}</li>{{/scopes}}</ul>
{{^scopes}}<p class="error">It asks for no pds scope: its token will be refused by every tool.</p>{{/scopes}}
<p class="muted">Your roles in each tenant still decide what is allowed; the scopes only narrow them. The grant lasts until you sign out
or it is unused for 30 days; it goes to {{redirect}}.</p>
<form method="post" action="{{approve}}"><button class="primary" type="submit" name="decision" value="approve">Allow</button></form>
<form method="post" action="{{abort}}"><button type="submit">Deny</button></form>`;

const DEVICE_INPUT = `<h1>Sign in a device</h1>
{{#error}}<p class="error">{{error}}</p>{{/error}}
<p>Enter the code your terminal shows (<span class="code">pds login --device</span>).</p>
{{{form}}}
<button class="primary" type="submit" form="op.deviceInputForm">Continue</button>`;

const DEVICE_CONFIRM = `<h1>Confirm the device</h1>
<p><strong>{{client}}</strong> asks to sign in. Your terminal must show this code:</p>
<p class="code" style="font-size:1.6rem">{{userCode}}</p>
<p class="muted">If it does not, or you did not start this, abort.</p>
{{{form}}}
<button class="primary" type="submit" form="op.deviceConfirmForm">Continue</button>
<button type="submit" form="op.deviceConfirmForm" value="yes" name="abort">Abort</button>`;

const MESSAGE = `<h1>{{heading}}</h1>{{#lines}}<p>{{.}}</p>{{/lines}}`;

function render(title: string, content: string, view: object): string {
  return Mustache.render(LAYOUT, { title, ...view }, { content });
}

/** One upstream sign-in button. */
export interface UpstreamLink {
  title: string;
  href: string;
}

/** The page offering the configured upstreams (or saying none is configured). */
export function signInPage(view: { client: string; upstreams: UpstreamLink[]; abort: string }): string {
  return render('Sign in', SIGN_IN, view);
}

/** The consent page: the client by name and id, each scope with what it allows, the redirect target. */
export function consentPage(view: {
  client: string;
  clientId: string;
  user: string;
  redirect: string;
  scopes: { name: string; description: string }[];
  approve: string;
  abort: string;
}): string {
  return render('Allow access', CONSENT, view);
}

/** The device-code input page; `form` is oidc-provider's own form markup (it carries the CSRF value). */
export function deviceInputPage(view: { form: string; error?: string }): string {
  return render('Sign in a device', DEVICE_INPUT, view);
}

/** The device-code confirmation page; `form` is oidc-provider's own form markup. */
export function deviceConfirmPage(view: { form: string; client: string; userCode: string }): string {
  return render('Confirm the device', DEVICE_CONFIRM, view);
}

/** A page that says one thing: success, or an error with what to do. */
export function messagePage(heading: string, lines: string[]): string {
  return render(heading, MESSAGE, { heading, lines });
}

/** The pages oidc-provider renders itself (`auth/oauth/provider.ts` `ProviderPages`). */
export const providerPages = {
  error: (out: { error: string; error_description?: string }) =>
    messagePage('Sign-in failed', [`${out.error}${out.error_description ? `: ${out.error_description}` : ''}`, 'Start again from your client.']),
  deviceInput: (form: string, error?: string) => deviceInputPage({ form, error }),
  deviceConfirm: (form: string, client: string, userCode: string) => deviceConfirmPage({ form, client, userCode }),
  deviceSuccess: (client: string) => messagePage('Signed in', [`${client} is signed in. You can close this window and go back to your terminal.`]),
};
