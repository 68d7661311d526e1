// The linking page: POST the text to /api/link, draw its mentions as Wikipedia links, and filter them by score
// on this page as the slider moves (the service already dropped those at or below its own γ).
"use strict";

const form = document.getElementById("link-form");
const textBox = document.getElementById("text");
const button = document.getElementById("link-button");
const slider = document.getElementById("threshold");
const sliderValue = document.getElementById("threshold-value");
const linkedText = document.getElementById("linked-text");
const summary = document.getElementById("summary");
const result = document.getElementById("result");
const errorLine = document.getElementById("error");

let answer = null; // {text, mentions, threshold} of the last linked text

async function describeService() {
  const service = document.getElementById("service");
  const response = await fetch("health");
  const health = await response.json();
  if (health.status === "ok") {
    const name = (path) => String(path ?? "?").split("/").pop();
    const entities = typeof health.entities === "number" ? `, ${health.entities.toLocaleString("en")} entities` : "";
    service.textContent = `Model ${name(health.model)}, KB ${name(health.kb)}${entities}.`;
  } else {
    service.textContent = `The model is ${health.status}: ${health.error ?? ""}`;
    if (health.status === "loading") setTimeout(describeService, 2000);
  }
}

async function link(event) {
  event.preventDefault();
  button.disabled = true;
  errorLine.hidden = true;
  try {
    const text = textBox.value;
    const response = await fetch("api/link", {
      method: "POST",
      headers: {"Content-Type": "application/json"},
      body: JSON.stringify({text}),
    });
    const body = await response.json();
    if (!response.ok) throw new Error(body.error ?? `${response.status} ${response.statusText}`);
    answer = {text, mentions: body.mentions.filter((m) => m.wikipedia_url), threshold: body.threshold ?? 0};
    setUpSlider();
    draw();
    result.hidden = false;
  } catch (error) {
    errorLine.textContent = error.message;
    errorLine.hidden = false;
  } finally {
    button.disabled = false;
  }
}

function setUpSlider() {
  // From the service's γ to the best score: the whole range of the slider changes what is shown.
  const best = Math.max(answer.threshold, ...answer.mentions.map((m) => m.score));
  slider.min = answer.threshold.toFixed(3);
  slider.max = (Math.ceil(best * 1000) / 1000).toFixed(3);
  slider.value = slider.min;
}

function draw() {
  const bar = Number(slider.value);
  sliderValue.textContent = bar.toFixed(3);
  // Offsets count code points; JavaScript strings count UTF-16 units, so slice an array of code points.
  const characters = Array.from(answer.text);
  const shown = answer.mentions.filter((m) => m.score >= bar);
  linkedText.replaceChildren();
  let position = 0;
  for (const mention of shown) {
    if (mention.start < position) continue; // overlapping mentions (merge=paper): the first one is drawn
    linkedText.append(characters.slice(position, mention.start).join(""));
    const anchor = document.createElement("a");
    anchor.className = "mention";
    anchor.href = mention.wikipedia_url;
    anchor.target = "_blank";
    anchor.rel = "noopener";
    anchor.dataset.score = mention.score;
    // Shown on hover by the style sheet (a.mention:hover::after), and read out by screen readers.
    anchor.dataset.card = `${mention.title} (score ${mention.score.toFixed(3)})\n${mention.description}`;
    anchor.setAttribute("aria-label", anchor.dataset.card);
    anchor.textContent = characters.slice(mention.start, mention.end).join("");
    linkedText.append(anchor);
    position = mention.end;
  }
  linkedText.append(characters.slice(position).join(""));
  summary.textContent = `${shown.length} of ${answer.mentions.length} linked mentions shown, those scoring at ` +
    `least ${bar.toFixed(3)}. Hover over one for its entity, follow it to its Wikipedia article.`;
}

form.addEventListener("submit", link);
slider.addEventListener("input", draw);
describeService();
