/** Where a call goes: `{base}{path}`, or Azure's deployment URL with its api-version (AZURE_OPENAI_API_VERSION, else 2024-10-21). */
import type { OpenAICompatiblePreset } from './openai-compatible-preset.js';

export function openaiCompatibleUrl(preset: OpenAICompatiblePreset, baseUrl: string, mode: 'native' | 'chat', model: string, apiVersion: string | null): URL {
  const base = baseUrl.replace(/\/+$/, '');
  if (preset.urlStyle === 'azure') {
    const operation = mode === 'native' ? 'completions' : 'chat/completions';
    const url = new URL(`${base}/openai/deployments/${encodeURIComponent(model)}/${operation}`);
    url.searchParams.set('api-version', apiVersion ?? '2024-10-21');
    return url;
  }
  const path = preset.paths[mode];
  // SDK-style base URLs often end in /v1 already (OPENAI_BASE_URL=https://api.openai.com/v1).
  const joined = base.endsWith('/v1') && path.startsWith('/v1/') ? `${base}${path.slice(3)}` : `${base}${path}`;
  return new URL(joined);
}
