/** Talks to the gateway: the signed-in key (sessionStorage, sent as x-api-key) and the error shape. */

export type Role = 'account' | 'admin';

export interface Session {
  key: string;
  role: Role;
  /** Account name for an API key; "Admin" for the admin key. */
  label: string;
}

const storageKey = 'tollgate.session';

export function loadSession(): Session | null {
  try {
    const parsed = JSON.parse(sessionStorage.getItem(storageKey) ?? 'null') as Session | null;
    return parsed && typeof parsed.key === 'string' && (parsed.role === 'account' || parsed.role === 'admin') ? parsed : null;
  } catch {
    return null;
  }
}

export function saveSession(session: Session): void {
  sessionStorage.setItem(storageKey, JSON.stringify(session));
}

export function clearSession(): void {
  sessionStorage.removeItem(storageKey);
}

/** An error in the OpenAI shape `{"error":{message,type,param,code}}`, with the HTTP status. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly type: string | null,
    readonly param: string | null,
    readonly code: string | null,
  ) {
    super(message);
  }

  static fromBody(status: number, body: unknown): ApiError {
    const error = (body as { error?: Record<string, unknown> } | null)?.error;
    if (error && typeof error === 'object') {
      const text = (value: unknown) => (typeof value === 'string' ? value : null);
      return new ApiError(text(error.message) ?? 'Unknown error', status, text(error.type), text(error.param), text(error.code));
    }
    return new ApiError(`HTTP ${status}`, status, null, null, null);
  }
}

export async function errorFromResponse(response: Response): Promise<ApiError> {
  const text = await response.text();
  try {
    return ApiError.fromBody(response.status, JSON.parse(text));
  } catch {
    return new ApiError(text.slice(0, 200) || `HTTP ${response.status}`, response.status, null, null, null);
  }
}

export async function getJson<T>(path: string, key: string): Promise<T> {
  const response = await fetch(path, { headers: { 'x-api-key': key, accept: 'application/json' } });
  if (!response.ok) throw await errorFromResponse(response);
  return (await response.json()) as T;
}

/** Works out whether a key is an account's API key or the admin key. */
export async function signIn(key: string): Promise<Session> {
  try {
    const me = await getJson<{ account: { name: string } }>('/v5/dashboard/me', key);
    return { key, role: 'account', label: me.account.name };
  } catch (accountError) {
    if (!(accountError instanceof ApiError) || accountError.status !== 401) throw accountError;
    try {
      await getJson('/admin/dashboard/accounts', key);
      return { key, role: 'admin', label: 'Admin' };
    } catch {
      throw accountError;
    }
  }
}

/** Builds a query string, dropping empty values. */
export function query(params: Record<string, string | number | undefined | null>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined && value !== null && value !== '') search.set(name, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
}
