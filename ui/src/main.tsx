import { render } from "preact";

render(<p>Shoal</p>, document.getElementById("app")!);
