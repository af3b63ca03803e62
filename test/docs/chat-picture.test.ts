import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../scripts/docs';
import { CHAT_PICTURE_PATH, CHAT_VIEWPORT, chatPicture, chatPictureSource } from '../support/chat-picture';
import { pngSize, sourceOf } from '../support/report-screenshot';

/**
 * docs/images/chat-message.png is current: taken of the messages the code renders now, drawn with
 * the Adaptive Cards version installed (compared by hash, so no font can make it flaky). When the
 * formats change, `npm run docs:screenshot` takes it again.
 */
describe('docs/images/chat-message.png', () => {
  it('shows the chat messages as the code renders them now (if this fails: npm run docs:screenshot)', () => {
    expect(existsSync(CHAT_PICTURE_PATH)).toBe(true);
    const png = readFileSync(CHAT_PICTURE_PATH);
    expect(pngSize(png)).toEqual(CHAT_VIEWPORT);
    const version = JSON.parse(
      readFileSync(join(ROOT, 'node_modules', 'adaptivecards', 'package.json'), 'utf8'),
    ).version;
    expect(sourceOf(png), 'the chat messages changed since the picture: run npm run docs:screenshot').toBe(
      chatPictureSource(chatPicture(), version),
    );
  });

  it('is shown in docs/chat.md', () => {
    expect(readFileSync(join(ROOT, 'docs', 'chat.md'), 'utf8')).toContain('](images/chat-message.png)');
  });
});
