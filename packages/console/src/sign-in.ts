// Signing in checks the keys with a first request (the event types every view needs): a bad
// key is answered 401, and the page shows the server's message. Signing out forgets them.
import { AuthenticationError, type EventTypeSummary } from '@svc/client';
import { pickableEvents } from './events.js';
import { announce, busy, byId } from './page.js';
import { appClient, forgetKeys, storeKeys, storedKeys, type Client, type Keys } from './session.js';

export interface SignInHandlers {
  signedIn(client: Client, events: readonly EventTypeSummary[]): void;
  signedOut(): void;
}

export function startSignIn(handlers: SignInHandlers): void {
  const section = byId('sign-in');
  const form = byId<HTMLFormElement>('sign-in-form');
  const signOut = byId<HTMLButtonElement>('sign-out');
  const signedInAs = byId('signed-in');

  function showSignedIn(keys: Keys | undefined): void {
    section.hidden = keys !== undefined;
    signOut.hidden = signedInAs.hidden = keys === undefined;
    signedInAs.textContent = keys ? `API key …${keys.apiKey.slice(-4)}` : '';
  }

  async function signIn(keys: Keys): Promise<void> {
    await busy(section, 'Signing in…', async () => {
      const client = appClient(keys);
      try {
        const events = await pickableEvents(client);
        storeKeys(keys);
        form.reset();
        showSignedIn(keys);
        handlers.signedIn(client, events);
        return `Signed in. ${events.length} event types to chart.`;
      } catch (error) {
        // Keys the server refuses (rotated since) are not tried again on reload.
        if (error instanceof AuthenticationError) forgetKeys();
        showSignedIn(undefined);
        throw error;
      }
    });
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const fields = new FormData(form);
    void signIn({ apiKey: String(fields.get('apiKey')).trim(), secretKey: String(fields.get('secretKey')).trim() });
  });

  signOut.addEventListener('click', () => {
    forgetKeys();
    handlers.signedOut();
    showSignedIn(undefined);
    announce('Signed out: the keys are forgotten.');
    byId('api-key').focus();
  });

  const kept = storedKeys();
  if (kept) void signIn(kept);
  else showSignedIn(undefined);
}
