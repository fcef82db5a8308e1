export { type ChartSeries, type TimeChartProps } from './chart-frame';
export { LineChart } from './line-chart';
export { StackedBarChart } from './stacked-bar-chart';
export { ChartColors } from './palette';
