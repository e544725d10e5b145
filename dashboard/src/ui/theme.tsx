import { useEffect, useState } from 'react';

// Light and dark themes. "System" (the default) follows prefers-color-scheme through the stylesheet's
// media query; "Light" and "Dark" set <html data-theme>, remembered in localStorage.

export type ThemeChoice = 'system' | 'light' | 'dark';
const STORAGE = 'flagpost-theme';

export function storedTheme(): ThemeChoice {
  try {
    const value = localStorage.getItem(STORAGE);
    return value === 'light' || value === 'dark' ? value : 'system';
  } catch {
    return 'system';
  }
}

export function applyTheme(choice: ThemeChoice): void {
  if (choice === 'system') delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = choice;
}

/** The theme switch: System, Light, Dark. */
export function ThemeSwitch() {
  const [choice, setChoice] = useState<ThemeChoice>(storedTheme);
  useEffect(() => {
    applyTheme(choice);
    try {
      if (choice === 'system') localStorage.removeItem(STORAGE);
      else localStorage.setItem(STORAGE, choice);
    } catch {
      // private mode: the choice lasts for this page
    }
  }, [choice]);
  return (
    <div className="segmented" role="radiogroup" aria-label="Theme">
      {(['system', 'light', 'dark'] as const).map((c) => (
        <button key={c} type="button" role="radio" aria-checked={choice === c} onClick={() => setChoice(c)}>
          {c === 'system' ? 'Auto' : c === 'light' ? 'Light' : 'Dark'}
        </button>
      ))}
    </div>
  );
}
