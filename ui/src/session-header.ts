/** The signed-in badge and sign-out link in the top bar, and the sign-in card. */
import { clearSession, signIn, type Session, ApiError, saveSession } from './api.js';
import { el } from './dom.js';

export function renderSessionBadge(slot: HTMLElement, session: Session | null): void {
  slot.replaceChildren();
  if (!session) return;
  const signOut = el('button', { type: 'button', class: 'link-button', id: 'sign-out' }, 'Sign out');
  signOut.addEventListener('click', () => {
    clearSession();
    location.reload();
  });
  slot.append(el('span', { class: `badge ${session.role}`, id: 'session-label' }, session.role === 'admin' ? 'Admin' : session.label), signOut);
}

/** Shows the sign-in form in `container`; resolves with the session once a key works. */
export function renderSignIn(container: HTMLElement, hint: string): Promise<Session> {
  return new Promise((resolve) => {
    const input = el('input', { type: 'password', id: 'api-key', name: 'api-key', placeholder: 'tg_… or the admin key', autocomplete: 'off', required: true });
    const error = el('div', { class: 'error-box', id: 'sign-in-error', hidden: true });
    const button = el('button', { type: 'submit', class: 'primary' }, 'Sign in');
    const form = el(
      'form',
      { class: 'card sign-in', id: 'sign-in' },
      el('h2', null, 'Sign in to Tollgate'),
      el('p', null, hint),
      el('label', null, 'API key', input),
      button,
      error,
    );
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      button.disabled = true;
      error.hidden = true;
      try {
        const session = await signIn(input.value.trim());
        saveSession(session);
        resolve(session);
      } catch (caught) {
        error.textContent = caught instanceof ApiError ? caught.message : 'The gateway did not answer.';
        error.hidden = false;
      } finally {
        button.disabled = false;
      }
    });
    container.replaceChildren(form);
    input.focus();
  });
}
