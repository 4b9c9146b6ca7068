// tack's session page: applies the server's rendered fragments as they
// arrive (server-sent events), and sends the answers to approval prompts.
// Every fragment is HTML the server rendered with all text escaped; this
// script builds its own elements with textContent only.
'use strict';
(() => {
  const cards = document.getElementById('cards');
  const timeline = document.getElementById('timeline');
  const status = document.getElementById('status');

  function parse(html) {
    const template = document.createElement('template');
    template.innerHTML = html;
    return template.content;
  }

  function item(frame) {
    const element = parse(frame.html).firstElementChild;
    if (!element) return;
    const old = document.getElementById(frame.id);
    if (old) old.replaceWith(element);
    else cards.append(element);
  }

  async function send(pending, answer, slot) {
    for (const button of slot.querySelectorAll('button')) button.disabled = true;
    try {
      const response = await fetch('answer', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ pending, answer }),
      });
      if (!response.ok) slot.textContent = await response.text();
    } catch (error) {
      slot.textContent = 'the answer could not be sent: ' + error;
    }
  }

  function prompt(frame) {
    const card = document.getElementById(frame.card);
    const slot = card && card.querySelector('.prompt');
    if (!slot) return;
    const question = document.createElement('span');
    question.textContent = 'Allow ' + frame.summary + '?';
    slot.replaceChildren(question);
    for (const [answer, label] of [['once', 'Allow once'], ['session', 'Allow for this session'], ['deny', 'Deny']]) {
      const button = document.createElement('button');
      button.type = 'button';
      button.className = 'answer-' + answer;
      button.textContent = label;
      button.addEventListener('click', () => send(frame.pending, answer, slot));
      slot.append(button);
    }
  }

  const events = new EventSource('events');
  events.onmessage = (message) => {
    const frame = JSON.parse(message.data);
    switch (frame.op) {
      case 'reset':
        cards.replaceChildren();
        timeline.replaceChildren();
        break;
      case 'item':
        item(frame);
        break;
      case 'timeline':
        timeline.replaceChildren(parse(frame.html));
        break;
      case 'prompt':
        prompt(frame);
        break;
      case 'status':
        status.textContent = frame.text;
        document.body.dataset.status = frame.state;
        break;
    }
  };
  events.onerror = () => {
    status.textContent = 'disconnected from tack (retrying)';
    document.body.dataset.status = 'disconnected';
  };
})();
