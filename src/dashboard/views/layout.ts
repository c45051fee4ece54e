import { html } from 'hono/html';

export type Html = ReturnType<typeof html>;

/**
 * What the viewer may do: `no-token` (INBOX_ADMIN_TOKEN unset: read-only for everyone),
 * `signed-out` (may sign in), `signed-in` (may replay; forms carry `csrfToken`).
 */
export type ViewerAccess = { kind: 'no-token' } | { kind: 'signed-out' } | { kind: 'signed-in'; csrfToken: string };

export interface Notice {
  text: string;
  bad?: boolean;
}

/** The hidden field every state-changing form carries. */
export function csrfField(access: ViewerAccess): Html | string {
  return access.kind === 'signed-in' ? html`<input type="hidden" name="csrf" value="${access.csrfToken}">` : '';
}

function accessControls(access: ViewerAccess) {
  if (access.kind === 'no-token') return html`<span class="mode">read-only · INBOX_ADMIN_TOKEN is not set</span>`;
  if (access.kind === 'signed-out') {
    return html`<span class="mode">read-only</span>
<form method="post" action="/dashboard/session"><input type="password" name="token" placeholder="admin token" autocomplete="current-password" aria-label="admin token" required><button type="submit">Sign in</button></form>`;
  }
  return html`<span class="mode">signed in as admin</span>
<form method="post" action="/dashboard/session/end">${csrfField(access)}<button class="secondary" type="submit">Sign out</button></form>`;
}

export function renderLayout(options: { title: string; access: ViewerAccess; notice?: Notice; body: Html }) {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${options.title} · webhook-inbox</title>
<link rel="stylesheet" href="/dashboard/assets/dashboard.css">
</head>
<body>
<header><h1><a href="/dashboard">webhook-inbox</a></h1><nav><a href="/dashboard">overview</a><a href="/dashboard/events">events</a></nav><span class="spacer"></span>${accessControls(options.access)}</header>
<main>
${options.notice ? html`<div class="notice${options.notice.bad ? ' bad' : ''}" role="status">${options.notice.text}</div>` : ''}
${options.body}
</main>
</body>
</html>`;
}

export const legend = html`<div class="legend"><span><i class="processed"></i>processed</span><span><i class="ignored"></i>ignored</span><span><i class="pending"></i>pending</span><span><i class="failed"></i>failed</span></div>`;
