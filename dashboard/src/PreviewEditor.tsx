import { EditorContent, useEditor } from '@tiptap/react';
import StarterKit from '@tiptap/starter-kit';

// The rich-text editor of preview content (contract D9): TipTap with the StarterKit the server validates
// and renders with (src/flags/preview-renderer.ts), so the editor can only make documents the server
// accepts. injectCSS is off: the dashboard's Content-Security-Policy allows no inline style.

export function PreviewEditor({ initial, onChange }: { initial: unknown; onChange: (doc: unknown) => void }) {
  const editor = useEditor({
    extensions: [StarterKit.configure({ link: { openOnClick: false } })],
    content: (initial as object | null) ?? '',
    injectCSS: false,
    immediatelyRender: true,
    editorProps: { attributes: { 'aria-label': 'Preview content', 'aria-multiline': 'true', role: 'textbox', class: 'editor-content' } },
    onUpdate: ({ editor: e }) => onChange(e.isEmpty ? null : e.getJSON()),
  });
  const button = (label: string, active: boolean, run: () => void) => (
    <button type="button" className="small" aria-pressed={active} onClick={run} disabled={!editor}>
      {label}
    </button>
  );
  return (
    <div className="field">
      <span className="label" id="preview-content-label">
        Preview content
      </span>
      <div className="toolbar editor-toolbar" role="toolbar" aria-label="Formatting">
        {editor && (
          <>
            {button('Bold', editor.isActive('bold'), () => editor.chain().focus().toggleBold().run())}
            {button('Italic', editor.isActive('italic'), () => editor.chain().focus().toggleItalic().run())}
            {button('Heading', editor.isActive('heading', { level: 2 }), () => editor.chain().focus().toggleHeading({ level: 2 }).run())}
            {button('Bullet list', editor.isActive('bulletList'), () => editor.chain().focus().toggleBulletList().run())}
            {button('Numbered list', editor.isActive('orderedList'), () => editor.chain().focus().toggleOrderedList().run())}
          </>
        )}
      </div>
      <EditorContent editor={editor} className="editor" />
    </div>
  );
}
